import { once } from 'node:events';
import { type AddressInfo, createServer as createTcpServer, type Server as TcpServer } from 'node:net';
import { createServer as createTlsServer, type Server as TlsServer, type TlsOptions, type TLSSocket } from 'node:tls';
import { generate } from 'selfsigned';
import { startTestReceiver } from '../../../testing';
import { WebhookUrlPolicy } from '../../url-policy/webhook-url-policy';
import { WebhookSender, type WebhookSenderOptions } from './webhook-sender';

/** Receivers that speak odd but legal HTTP, and the readable errors of those that fail (issue 11, item 6). */

const LOOPBACK_ALLOWED = ['127.0.0.0/8'];
const SIGNATURE = 'v1=4f1c2a9e0b7d5c3a8e6f0d1b2c3a4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f';
const HEADERS = { 'Content-Type': 'application/json', 'X-Service-Signature': SIGNATURE };
const BODY = '{"event":"funding.approved","secret":"do-not-store"}';

interface Pems {
  key: string;
  cert: string;
}

async function certificate(options: { expired?: boolean; ip?: string } = {}): Promise<Pems> {
  const now = Date.now();
  const pems = await generate([{ name: 'commonName', value: 'odd.test' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    ...(options.expired ? { notBeforeDate: new Date(now - 30 * 86_400_000), notAfterDate: new Date(now - 86_400_000) } : {}),
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: options.ip ?? '127.0.0.1' }] }],
  });
  return { key: pems.private, cert: pems.cert };
}

interface RawReceiver {
  url: string;
  caPem: string;
  connections: number;
  requests: number;
}

describe('WebhookSender against receivers that speak odd but legal HTTP', () => {
  const cleanups: Array<() => Promise<void>> = [];
  let loopbackCertificate: Pems;
  /** Trusts loopbackCertificate; shared, as building a sender's CA store costs more than most of these tests. */
  let trusting: WebhookSender;

  beforeAll(async () => {
    loopbackCertificate = await certificate();
    trusting = new WebhookSender({
      urlPolicy: new WebhookUrlPolicy({ allowedCidrs: LOOPBACK_ALLOWED }),
      extraCaPem: loopbackCertificate.cert,
    });
  });

  afterAll(() => trusting.close());

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function sender(caPem: string | undefined, options: Partial<WebhookSenderOptions> = {}): WebhookSender {
    const created = new WebhookSender({
      urlPolicy: new WebhookUrlPolicy({ allowedCidrs: LOOPBACK_ALLOWED }),
      extraCaPem: caPem,
      ...options,
    });
    cleanups.push(() => created.close());
    return created;
  }

  function post(target: WebhookSender, url: string) {
    return target.send({ url, body: BODY, headers: HEADERS });
  }

  async function listen<T extends TcpServer | TlsServer>(server: T, sockets: Set<{ destroy(): void }>): Promise<string> {
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });
    return `https://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  }

  /**
   * A TLS server on 127.0.0.1 that answers each whole request (head + Content-Length body) with the given raw bytes,
   * written as separate writes in order, keeping the connection open unless a part is `'end'`.
   */
  async function rawReceiver(
    answer: (requestIndex: number) => Array<string | 'end'>,
    tls: TlsOptions = {},
    pems?: Pems,
  ): Promise<RawReceiver> {
    const { key, cert } = pems ?? loopbackCertificate;
    const sockets = new Set<TLSSocket>();
    const receiver = { url: '', caPem: cert, connections: 0, requests: 0 };
    const server = createTlsServer({ key, cert, ...tls }, (socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
      let buffered = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        buffered = Buffer.concat([buffered, chunk]);
        for (;;) {
          const headEnd = buffered.indexOf('\r\n\r\n');
          if (headEnd === -1) return;
          const length = Number(/content-length: *(\d+)/i.exec(buffered.subarray(0, headEnd).toString('latin1'))?.[1] ?? 0);
          if (buffered.length < headEnd + 4 + length) return;
          buffered = buffered.subarray(headEnd + 4 + length);
          writeInOrder(socket, answer(receiver.requests++));
        }
      });
    });
    server.on('connection', () => receiver.connections++);
    server.on('tlsClientError', () => undefined);
    receiver.url = await listen(server, sockets);
    return receiver;
  }

  describe('interim (1xx) responses before the final one (RFC 9110 15.2)', () => {
    it('records an unsolicited 100 Continue followed by 200 as success, with the final status and body', async () => {
      const receiver = await rawReceiver(() => ['HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok']);

      const result = await post(trusting, receiver.url);

      expect(result).toMatchObject({ outcome: 'success', statusCode: 200, error: null, responseExcerpt: 'ok' });
    });

    it('records a 100 Continue followed by 500 as http_error 500', async () => {
      const receiver = await rawReceiver(() => [
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\ndown',
      ]);

      const result = await post(trusting, receiver.url);

      expect(result).toMatchObject({ outcome: 'http_error', statusCode: 500, error: 'receiver answered 500', responseExcerpt: 'down' });
    });

    it.each([
      ['102 Processing', 'HTTP/1.1 102 Processing\r\n\r\n'],
      ['103 Early Hints with headers', 'HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n'],
      [
        '100, 102 and 103 in a row',
        'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 102 Processing\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n',
      ],
      ['a 100 with a header, no reason phrase and bare LF line ends', 'HTTP/1.1 100\nX-Trace: 1\n\n'],
    ])('records %s followed by 204 as success', async (_label, interim) => {
      const receiver = await rawReceiver(() => [interim + 'HTTP/1.1 204 No Content\r\n\r\n']);

      const result = await post(trusting, receiver.url);

      expect(result).toMatchObject({ outcome: 'success', statusCode: 204, error: null, responseExcerpt: null });
    });

    it('accepts a 100 Continue split over several writes, and the final response in its own write', async () => {
      const parts = ['HTTP/1.', '1 10', '0 Contin', 'ue\r\n', '\r', '\n', 'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok'];
      const receiver = await rawReceiver(() => parts);

      const result = await post(trusting, receiver.url);

      expect(result).toMatchObject({ outcome: 'success', statusCode: 200, responseExcerpt: 'ok' });
    });

    it('keeps the connection for the next attempt, and never cuts what only looks like a 100 inside a body', async () => {
      const lookalike = 'HTTP/1.1 100 Continue\r\n\r\n';
      const receiver = await rawReceiver(() => [
        `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: ${lookalike.length}\r\n\r\n`,
        lookalike,
      ]);
      const target = sender(receiver.caPem, { connectionsPerOrigin: 1 });

      const results = [await post(target, receiver.url), await post(target, receiver.url), await post(target, receiver.url)];

      expect(results.map((result) => [result.outcome, result.statusCode, result.responseExcerpt])).toEqual(
        Array(3).fill(['success', 200, lookalike]),
      );
      expect(receiver.requests).toBe(3);
      expect(receiver.connections).toBe(1);
    });

    it('still refuses an unrequested 101 Switching Protocols, as an invalid response', async () => {
      const receiver = await rawReceiver(() => ['HTTP/1.1 101 Switching Protocols\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n']);

      const result = await post(trusting, receiver.url);

      expect(result).toMatchObject({
        outcome: 'connect_error',
        statusCode: null,
        error: 'invalid HTTP response (unrequested protocol upgrade)',
      });
    });

    it('reports a response that is not HTTP by the parser reason, not by an error class name', async () => {
      const receiver = await rawReceiver(() => ['HELLO\r\n\r\n', 'end']);

      const result = await post(trusting, receiver.url);

      expect(result.outcome).toBe('connect_error');
      expect(result.error).toMatch(/^invalid HTTP response \(Expected HTTP\/.*\)$/);
    });
  });

  describe('3xx: only the redirect statuses are redirects', () => {
    it.each([301, 302, 303, 307, 308])('reports %i as a redirect not followed', async (status) => {
      const receiver = await rawReceiver(() => [
        `HTTP/1.1 ${status} Moved\r\nLocation: https://127.0.0.1:1/elsewhere\r\nContent-Length: 0\r\n\r\n`,
      ]);

      const result = await post(trusting, receiver.url);

      expect(result).toMatchObject({ outcome: 'http_error', statusCode: status, error: `redirect (${status}) not followed` });
    });

    it.each([300, 304, 305, 306, 399])('reports %i as a plain answer, not a redirect', async (status) => {
      const receiver = await rawReceiver(() => [`HTTP/1.1 ${status} Whatever\r\nContent-Length: 0\r\n\r\n`]);

      const result = await post(trusting, receiver.url);

      expect(result).toMatchObject({ outcome: 'http_error', statusCode: status, error: `receiver answered ${status}` });
    });
  });

  describe('stored TLS and connection errors are short and readable', () => {
    /** What a stored error must never hold: OpenSSL's build paths and error stacks, a stack trace, request data. */
    function expectReadable(error: string | null): void {
      expect(error).not.toBeNull();
      expect(error!.length).toBeLessThanOrEqual(300);
      expect(error).not.toMatch(/deps\/|openssl\/|\.c:\d|:error:[0-9A-F]{8}:|\n|\bat \S+ \(|node:internal/);
      expect(error).not.toContain(SIGNATURE);
      expect(error).not.toContain('do-not-store');
    }

    it('an expired certificate: "certificate has expired", nothing sent', async () => {
      const receiver = await rawReceiver(() => ['HTTP/1.1 204 No Content\r\n\r\n'], {}, await certificate({ expired: true }));

      const result = await post(sender(receiver.caPem), receiver.url);

      expect(result).toMatchObject({ outcome: 'tls_error', statusCode: null, error: 'certificate has expired' });
      expect(receiver.requests).toBe(0);
    });

    it('an untrusted self-signed certificate: "self-signed certificate"', async () => {
      const receiver = await rawReceiver(() => ['HTTP/1.1 204 No Content\r\n\r\n']);

      const result = await post(sender(undefined), receiver.url);

      expect(result).toMatchObject({ outcome: 'tls_error', statusCode: null, error: 'self-signed certificate' });
      expect(receiver.requests).toBe(0);
    });

    it('a certificate for another address: "hostname does not match certificate (…)" naming both', async () => {
      const receiver = await rawReceiver(() => ['HTTP/1.1 204 No Content\r\n\r\n'], {}, await certificate({ ip: '10.9.9.9' }));

      const result = await post(sender(receiver.caPem), receiver.url);

      expect(result).toMatchObject({
        outcome: 'tls_error',
        statusCode: null,
        error: "hostname does not match certificate (IP: 127.0.0.1 is not in the cert's list: 10.9.9.9)",
      });
      expect(receiver.requests).toBe(0);
    });

    it('a receiver offering only TLS 1.0: the handshake failure by its reason, with no OpenSSL build path', async () => {
      const receiver = await rawReceiver(() => ['HTTP/1.1 204 No Content\r\n\r\n'], {
        minVersion: 'TLSv1',
        maxVersion: 'TLSv1',
        ciphers: 'DEFAULT:@SECLEVEL=0',
      });

      const result = await post(trusting, receiver.url);

      expect(result).toMatchObject({
        outcome: 'tls_error',
        statusCode: null,
        error: 'TLS handshake failed: tlsv1 alert protocol version (the receiver accepts none of the TLS versions we offer, 1.2 and 1.3)',
      });
      expectReadable(result.error);
    });

    it('a receiver that alerts handshake_failure (no cipher in common)', async () => {
      const receiver = await rawReceiver(() => ['HTTP/1.1 204 No Content\r\n\r\n'], {
        maxVersion: 'TLSv1.2',
        ciphers: 'NULL-SHA256:@SECLEVEL=0',
      });

      const result = await post(trusting, receiver.url);

      expect(result).toMatchObject({ outcome: 'tls_error', statusCode: null });
      // Alert 40 as the OpenSSL of this Node names it: "sslv3 alert …" (3.0) or "ssl/tls alert …" (3.5).
      expect(result.error).toMatch(
        /^TLS handshake failed: (sslv3|ssl\/tls) alert handshake failure \(the receiver refused the handshake, e\.g\. no cipher in common\)$/,
      );
      expectReadable(result.error);
    });

    it('plain HTTP on an https:// port', async () => {
      const sockets = new Set<{ destroy(): void }>();
      const plain = createTcpServer((socket) => {
        sockets.add(socket);
        socket.on('error', () => undefined);
        socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n'));
      });
      const url = await listen(plain, sockets);

      const result = await post(sender(undefined), url);

      expect(result.outcome).toBe('tls_error');
      expect(result.error).toMatch(
        /^TLS handshake failed: (wrong version number|packet length too long) \(the port does not speak TLS, is it plain HTTP\?\)$/,
      );
      expectReadable(result.error);
    });

    it('a connection reset (RST) in the middle of the response body', async () => {
      const receiver = await startTestReceiver();
      cleanups.push(() => receiver.close());
      receiver.respondWith('reset');

      const result = await post(sender(receiver.caPem), receiver.url());

      expect(result).toMatchObject({ outcome: 'connect_error', statusCode: 200, responseExcerpt: 'partial' });
      expect(result.error).toMatch(/^connection (reset|closed) by the receiver$/);
    });

    it('a connection closed before the announced body ended', async () => {
      const receiver = await rawReceiver(() => ['HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial', 'end']);

      const result = await post(trusting, receiver.url);

      expect(result).toMatchObject({
        outcome: 'connect_error',
        statusCode: 200,
        error: 'connection closed by the receiver',
        responseExcerpt: 'partial',
      });
    });

    it('a refused connection', async () => {
      const probe = createTcpServer();
      probe.listen(0, '127.0.0.1');
      await once(probe, 'listening');
      const port = (probe.address() as AddressInfo).port;
      await new Promise((resolve) => probe.close(resolve));

      const result = await post(sender(undefined), `https://127.0.0.1:${port}/hook`);

      expect(result).toMatchObject({ outcome: 'connect_error', statusCode: null, error: 'connection refused' });
    });
  });
});

/** Writes each part once the previous one was handed to the kernel; `'end'` ends the connection. */
function writeInOrder(socket: TLSSocket, parts: Array<string | 'end'>): void {
  const [first, ...rest] = parts;
  if (first === undefined || socket.destroyed) return;
  if (first === 'end') {
    socket.end();
    return;
  }
  socket.write(first, () => writeInOrder(socket, rest));
}
