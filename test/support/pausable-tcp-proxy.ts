import { createServer, type Server, Socket } from 'node:net';

export type ProxyMode = 'forwarding' | 'paused' | 'refusing';

/**
 * A TCP proxy on loopback in front of a database server, to make the database hang without touching the
 * shared server: `pause()` stops forwarding bytes both ways while every socket stays open (what a client
 * sees when the server process is stopped or the network drops packets), `resume()` delivers what was
 * held back and goes on, `refuse()` closes every socket and stops listening (the server is down).
 */
export class PausableTcpProxy {
  private mode: ProxyMode = 'forwarding';
  private readonly pairs = new Set<readonly [Socket, Socket]>();

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<PausableTcpProxy> {
    let proxy: PausableTcpProxy | undefined;
    const server = createServer((client) => proxy!.accept(client, targetHost, targetPort));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    proxy = new PausableTcpProxy(server, (server.address() as { port: number }).port);
    return proxy;
  }

  /** `url` (mysql://user@host:port/db) rewritten to go through this proxy. */
  proxiedUrl(url: string): string {
    const proxied = new URL(url);
    proxied.hostname = '127.0.0.1';
    proxied.port = String(this.port);
    return proxied.toString();
  }

  get state(): ProxyMode {
    return this.mode;
  }

  /** Open client connections. */
  get connections(): number {
    return this.pairs.size;
  }

  pause(): void {
    this.mode = 'paused';
  }

  /** Forwards again: from `paused`, delivers what was held back; from `refusing`, listens again on the same port. */
  async resume(): Promise<void> {
    if (this.mode === 'refusing') await new Promise<void>((done) => this.server.listen(this.port, '127.0.0.1', done));
    this.mode = 'forwarding';
    for (const flush of this.flushes) flush();
  }

  /** The server is down: closes every connection and stops listening, so new ones get ECONNREFUSED, until `resume()`. */
  async refuse(): Promise<void> {
    if (this.mode === 'refusing') return;
    this.mode = 'refusing';
    this.destroyAll();
    await new Promise((done) => this.server.close(done));
  }

  async close(): Promise<void> {
    await this.refuse();
  }

  private destroyAll(): void {
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    this.flushes.clear();
  }

  private readonly flushes = new Set<() => void>();

  private accept(client: Socket, host: string, port: number): void {
    if (this.mode === 'refusing') {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    const pair = [client, upstream] as const;
    // Bytes read while paused are held here, in order, and written on resume: nothing is forwarded meanwhile.
    const held: [Socket, Buffer][] = [];
    const flush = () => {
      for (const [to, chunk] of held.splice(0)) to.write(chunk);
    };
    const forward = (to: Socket) => (chunk: Buffer) => {
      if (this.mode === 'forwarding' && held.length === 0) to.write(chunk);
      else held.push([to, chunk]);
    };
    this.pairs.add(pair);
    this.flushes.add(flush);
    const close = () => {
      this.pairs.delete(pair);
      this.flushes.delete(flush);
      client.destroy();
      upstream.destroy();
    };
    client.on('data', forward(upstream)).on('error', close).on('close', close);
    upstream.on('data', forward(client)).on('error', close).on('close', close);
    upstream.connect(port, host);
  }
}
