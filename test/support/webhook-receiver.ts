import { once } from 'node:events';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { generate } from 'selfsigned';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: Buffer;
  receivedAt: number;
}

/**
 * How the receiver answers a request:
 * - `{ status, headers, body }`: a normal response (default `{ status: 204 }`);
 * - `'hang'`: read the request, never answer (the socket is destroyed by `close()`);
 * - `'reset'`: send a 200 status line, headers announcing a longer body and a few bytes of it, then reset the TCP
 *   connection (RST) mid-response;
 * - `{ redirectTo }`: answer 302 with that Location.
 */
export type ReceiverBehaviour =
  | { status?: number; headers?: Record<string, string>; body?: string }
  | 'hang'
  | 'reset'
  | { redirectTo: string };

export interface WebhookReceiver {
  /** e.g. https://127.0.0.1:PORT/hook */
  url(path?: string): string;
  /** The self-signed certificate (PEM) to trust; valid for IP 127.0.0.1 and DNS receiver.test. */
  readonly caPem: string;
  /** The port the receiver listens on (127.0.0.1). */
  readonly port: number;
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted so far (counted before the TLS handshake). */
  connections: number;
  respondWith(behaviour: ReceiverBehaviour | ((req: ReceivedRequest) => ReceiverBehaviour)): void;
  /** Resolves once `count` requests arrived; on timeout rejects with a message listing what did arrive. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Stops listening and destroys every open socket, hung ones included. */
  close(): Promise<void>;
}

export const RECEIVER_HOSTNAME = 'receiver.test';
const DEFAULT_BEHAVIOUR: ReceiverBehaviour = { status: 204 };

interface Waiter {
  count: number;
  resolve: (requests: ReceivedRequest[]) => void;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const pems = await generate([{ name: 'commonName', value: RECEIVER_HOSTNAME }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: RECEIVER_HOSTNAME },
        ],
      },
    ],
  });

  const requests: ReceivedRequest[] = [];
  // Raw TCP sockets by client port: a TLSSocket cannot send a TCP reset itself, its underlying socket can.
  const sockets = new Map<number, Socket>();
  const waiters = new Set<Waiter>();
  let behaviour: ReceiverBehaviour | ((req: ReceivedRequest) => ReceiverBehaviour) = DEFAULT_BEHAVIOUR;

  const server = createServer({ key: pems.private, cert: pems.cert, keepAlive: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        rawBody: Buffer.concat(chunks),
        receivedAt: Date.now(),
      };
      requests.push(received);
      for (const waiter of waiters) {
        if (requests.length >= waiter.count) {
          waiters.delete(waiter);
          waiter.resolve(requests.slice());
        }
      }
      const chosen = typeof behaviour === 'function' ? behaviour(received) : behaviour;
      answer(chosen, res, () => sockets.get(req.socket.remotePort ?? -1)?.resetAndDestroy());
    });
  });
  // Requests that hang must not be cut by Node's own server timeouts while a test waits on them.
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  server.on('connection', (socket: Socket) => {
    receiver.connections++;
    const remotePort = socket.remotePort ?? -1;
    sockets.set(remotePort, socket);
    socket.on('close', () => {
      if (sockets.get(remotePort) === socket) sockets.delete(remotePort);
    });
  });
  // Clients refusing the certificate abort the handshake; that is an expected outcome, not a test failure.
  server.on('tlsClientError', () => undefined);

  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | null = null;

  const receiver: WebhookReceiver = {
    url: (path = '/hook') => `https://127.0.0.1:${port}${path.startsWith('/') ? path : `/${path}`}`,
    caPem: pems.cert,
    port,
    requests,
    connections: 0,
    respondWith(next) {
      behaviour = next;
    },
    waitForRequests(count, timeoutMs = 5000) {
      if (requests.length >= count) return Promise.resolve(requests.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`expected ${count} webhook request(s) within ${timeoutMs} ms, got ${describe(requests)}`));
        }, timeoutMs);
        const waiter: Waiter = {
          count,
          resolve: (arrived) => {
            clearTimeout(timer);
            resolve(arrived);
          },
        };
        waiters.add(waiter);
      });
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets.values()) socket.destroy();
      });
      return closed;
    },
  };
  return receiver;
}

function answer(behaviour: ReceiverBehaviour, res: ServerResponse, reset: () => void): void {
  if (behaviour === 'hang') return;
  if (behaviour === 'reset') {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
    res.write('partial', reset);
    return;
  }
  if ('redirectTo' in behaviour) {
    res.writeHead(302, { location: behaviour.redirectTo, 'content-length': '0' });
    res.end();
    return;
  }
  res.writeHead(behaviour.status ?? 204, behaviour.headers);
  res.end(behaviour.body);
}

function describe(requests: readonly ReceivedRequest[]): string {
  if (requests.length === 0) return 'none';
  const lines = requests.map((r) => {
    const serviceType = r.headers['x-service-type'];
    return `${r.method} ${r.path} (X-Service-Type: ${serviceType === undefined ? '-' : String(serviceType)})`;
  });
  return `${requests.length}: ${lines.join(', ')}`;
}
