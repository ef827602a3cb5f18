import type { Socket } from 'node:net';

/**
 * Past this many bytes without the blank line that ends it, a would-be interim head is handed to undici as it is,
 * whose parser then fails it against its own header limit (16 KiB by default).
 */
const MAX_INTERIM_HEAD_BYTES = 16 * 1024;

/** `HTTP/d.d 1dd` and the byte after the status code: enough to tell an interim status line from a final one. */
const STATUS_LINE_PREFIX_BYTES = 13;

const H = 0x48;
const T = 0x54;
const P = 0x50;
const SLASH = 0x2f;
const DOT = 0x2e;
const SPACE = 0x20;
const CR = 0x0d;
const LF = 0x0a;
const ZERO = 0x30;
const ONE = 0x31;
const NINE = 0x39;

type Verdict = 'interim' | 'final' | 'undecided';

/**
 * Makes a keep-alive connection drop the interim (1xx) responses that come before each final response, except 101.
 *
 * RFC 9110 15.2: a client must accept one or more 1xx responses before the final one, even unsolicited (we never send
 * `Expect: 100-continue`). undici's HTTP/1.1 client destroys the connection as a "bad response" on any `100`
 * (lib/dispatcher/client-h1.js, onHeadersComplete) and offers no option to accept it, so a receiver whose server
 * answers `100 Continue` and then `200` failed every attempt as a closed connection. A 1xx response is only a status
 * line and headers, ended by an empty line (it never has a body), so it can be cut from the byte stream before
 * undici's parser sees it: the parser then reads the final response as the first and only one.
 *
 * Where a response starts is known without parsing the rest of HTTP: a request is written whole in one tick (string
 * bodies, pipelining 1, and undici never writes a POST while another response is on its way), so the first bytes
 * received after a write are the start of its response. Only there, and after each interim head cut, are 1xx heads
 * looked for; everything else passes through untouched, as do bytes received while no request is outstanding (which
 * undici rejects itself).
 *
 * Works on the socket's own `write` and `push` (what Node's stream handle calls for every chunk it reads), so undici
 * keeps the real TLS socket with all its properties.
 */
export function dropInterimResponses(socket: Socket): void {
  let atResponseStart = false;
  let held: Buffer | null = null;

  const write = socket.write;
  socket.write = function (this: Socket, ...args: Parameters<Socket['write']>): boolean {
    atResponseStart = true;
    return write.apply(this, args);
  } as Socket['write'];

  const push = socket.push;
  socket.push = function (this: Socket, chunk: unknown, encoding?: BufferEncoding): boolean {
    if (!atResponseStart || !Buffer.isBuffer(chunk)) {
      if (chunk === null && held !== null) {
        // The connection ended inside what looked like an interim head: let undici's parser judge those bytes.
        const rest = held;
        held = null;
        push.call(this, rest);
      }
      return push.call(this, chunk, encoding);
    }
    let bytes = held === null ? chunk : Buffer.concat([held, chunk]);
    held = null;
    for (;;) {
      const verdict = classify(bytes);
      if (verdict === 'final') {
        atResponseStart = false;
        return push.call(this, bytes);
      }
      const end = verdict === 'interim' ? endOfHead(bytes) : -1;
      if (end === -1) {
        if (bytes.length > MAX_INTERIM_HEAD_BYTES) {
          atResponseStart = false;
          return push.call(this, bytes);
        }
        held = bytes;
        return true;
      }
      bytes = bytes.subarray(end);
      if (bytes.length === 0) return true;
    }
  };
}

/** Whether these bytes (the start of a response) begin with an interim status line other than 101. */
function classify(bytes: Buffer): Verdict {
  const length = Math.min(bytes.length, STATUS_LINE_PREFIX_BYTES);
  if (length === 0) return 'undecided';
  for (let i = 0; i < length; i++) {
    if (!matchesAt(bytes[i], i)) return 'final';
  }
  if (bytes.length < STATUS_LINE_PREFIX_BYTES) return 'undecided';
  // 101 Switching Protocols is not a mere interim answer: undici handles (and here rejects) it itself.
  return bytes[10] === ZERO && bytes[11] === ONE ? 'final' : 'interim';
}

function matchesAt(byte: number, index: number): boolean {
  switch (index) {
    case 0:
      return byte === H;
    case 1:
    case 2:
      return byte === T;
    case 3:
      return byte === P;
    case 4:
      return byte === SLASH;
    case 6:
      return byte === DOT;
    case 8:
      return byte === SPACE;
    case 9:
      return byte === ONE;
    case 12:
      return byte === SPACE || byte === CR || byte === LF;
    default: // 5, 7: version digits; 10, 11: status digits
      return byte >= ZERO && byte <= NINE;
  }
}

/** Offset just past the empty line that ends the head (CRLF CRLF, or bare LFs), or -1 if it has not arrived yet. */
function endOfHead(bytes: Buffer): number {
  for (let i = bytes.indexOf(LF); i !== -1; i = bytes.indexOf(LF, i + 1)) {
    if (bytes[i + 1] === LF) return i + 2;
    if (bytes[i + 1] === CR && bytes[i + 2] === LF) return i + 3;
  }
  return -1;
}
