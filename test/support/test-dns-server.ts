import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import { isIPv4, isIPv6 } from 'node:net';

/** Addresses of one name, and the TTL its answers carry. */
export interface TestDnsRecord {
  readonly a?: readonly string[];
  readonly aaaa?: readonly string[];
  readonly ttlSeconds?: number;
  /** Answer this long after the question (default at once). */
  readonly delayMs?: number;
}

/** One question the server received. */
export interface TestDnsQuery {
  /** The message id: a resolver's retransmission of a question repeats it. */
  readonly id: number;
  readonly name: string;
  readonly type: 'A' | 'AAAA' | number;
  readonly at: number;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;
const CLASS_IN = 1;
const RCODE_NXDOMAIN = 3;

/**
 * A tiny authoritative DNS server on 127.0.0.1 over UDP (RFC 1035 §4): it answers A and AAAA for the names it is given,
 * NOERROR with no answer for a name that has none of the type asked, NXDOMAIN for other names, and never answers any
 * name under a black-holed zone (the review's "DNS server that never answers one zone").
 */
export class TestDnsServer {
  readonly queries: TestDnsQuery[] = [];
  private readonly records = new Map<string, TestDnsRecord>();
  private closed = false;

  private constructor(
    private readonly socket: Socket,
    private readonly blackHoledZones: string[],
  ) {
    socket.on('message', (message, peer) => this.answer(message, peer));
  }

  static async start(options: { blackHoledZones?: readonly string[] } = {}): Promise<TestDnsServer> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve, reject) => {
      socket.once('error', reject);
      socket.bind(0, '127.0.0.1', () => resolve());
    });
    return new TestDnsServer(
      socket,
      (options.blackHoledZones ?? []).map((zone) => zone.toLowerCase()),
    );
  }

  /** `127.0.0.1:<port>`, for `hostResolution.servers`. */
  get address(): string {
    return `127.0.0.1:${this.socket.address().port}`;
  }

  set(name: string, record: TestDnsRecord): void {
    this.records.set(name.toLowerCase(), record);
  }

  /** From now on, never answer `zone` or any name under it. */
  blackHole(zone: string): void {
    this.blackHoledZones.push(zone.toLowerCase());
  }

  /** The questions received for `name` (any type). */
  queriesFor(name: string): TestDnsQuery[] {
    return this.queries.filter((query) => query.name === name.toLowerCase());
  }

  /** How many distinct `type` questions for `name` arrived, retransmissions counted once. */
  questionsFor(name: string, type: 'A' | 'AAAA'): number {
    return new Set(this.queriesFor(name).flatMap((query) => (query.type === type ? [query.id] : []))).size;
  }

  close(): Promise<void> {
    this.closed = true;
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }

  private answer(message: Buffer, peer: RemoteInfo): void {
    const question = parseQuestion(message);
    if (question === null) return;
    const { id, flags, name, type, questionEnd } = question;
    this.queries.push({ id, name, type: type === TYPE_A ? 'A' : type === TYPE_AAAA ? 'AAAA' : type, at: Date.now() });
    if (this.blackHoledZones.some((zone) => name === zone || name.endsWith(`.${zone}`))) return;
    const record = this.records.get(name);
    const addresses = record === undefined ? [] : ((type === TYPE_A ? record.a : type === TYPE_AAAA ? record.aaaa : []) ?? []);
    const header = Buffer.alloc(12);
    header.writeUInt16BE(id, 0);
    // QR=1, the query's opcode and RD, AA=1, RA=1; RCODE NXDOMAIN for an unknown name.
    header.writeUInt16BE(0x8000 | (flags & 0x7900) | 0x0400 | 0x0080 | (record === undefined ? RCODE_NXDOMAIN : 0), 2);
    header.writeUInt16BE(1, 4); // QDCOUNT
    header.writeUInt16BE(addresses.length, 6); // ANCOUNT
    const answers = addresses.map((address) => resourceRecord(type, address, record?.ttlSeconds ?? 60));
    const reply = Buffer.concat([header, message.subarray(12, questionEnd), ...answers]);
    const send = () => {
      if (!this.closed) this.socket.send(reply, peer.port, peer.address);
    };
    if (record?.delayMs) setTimeout(send, record.delayMs);
    else send();
  }
}

function parseQuestion(message: Buffer): { id: number; flags: number; name: string; type: number; questionEnd: number } | null {
  if (message.length < 12 || message.readUInt16BE(4) !== 1) return null;
  const labels: string[] = [];
  let offset = 12;
  while (offset < message.length) {
    const length = message[offset];
    offset += 1;
    if (length === 0) break;
    if (length > 63) return null; // no compression in a question we send ourselves
    labels.push(message.toString('latin1', offset, offset + length));
    offset += length;
  }
  if (offset + 4 > message.length) return null;
  return {
    id: message.readUInt16BE(0),
    flags: message.readUInt16BE(2),
    name: labels.join('.').toLowerCase(),
    type: message.readUInt16BE(offset),
    questionEnd: offset + 4,
  };
}

function resourceRecord(type: number, address: string, ttlSeconds: number): Buffer {
  const data = type === TYPE_A && isIPv4(address) ? ipv4Bytes(address) : type === TYPE_AAAA && isIPv6(address) ? ipv6Bytes(address) : null;
  if (data === null) throw new Error(`${address} is not an address of DNS type ${type}`);
  const fixed = Buffer.alloc(12);
  fixed.writeUInt16BE(0xc00c, 0); // NAME: a pointer to the question's name
  fixed.writeUInt16BE(type, 2);
  fixed.writeUInt16BE(CLASS_IN, 4);
  fixed.writeUInt32BE(ttlSeconds, 6);
  fixed.writeUInt16BE(data.length, 10);
  return Buffer.concat([fixed, data]);
}

function ipv4Bytes(address: string): Buffer {
  return Buffer.from(address.split('.').map(Number));
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail = ''] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const missing = 8 - groups(head).length - groups(tail).length;
  const all = address.includes('::') ? [...groups(head), ...Array<string>(missing).fill('0'), ...groups(tail)] : groups(head);
  const bytes = Buffer.alloc(16);
  all.forEach((group, index) => bytes.writeUInt16BE(parseInt(group, 16), index * 2));
  return bytes;
}
