import { once } from 'node:events';
import { createServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { type DeliveryFilter, describeFilter, describeRequests, ReceivedRequest } from './received-request';
import { answer, type ReceiverBehaviour } from './receiver-behaviour';
import { generateTestCertificate } from './test-certificate';

export type ReceiverAnswer = ReceiverBehaviour | ((request: ReceivedRequest) => ReceiverBehaviour);

/** Which requests a behaviour applies to: one path (e.g. `'/hook'`), or every path when omitted. */
export interface BehaviourScope {
  readonly path?: string;
}

/** What to wait for: the filter, at least `count` matching requests (default 1), within `timeoutMs` (default 5000). */
export interface WaitForDelivery extends DeliveryFilter {
  readonly count?: number;
  readonly timeoutMs?: number;
}

/** An HTTPS server on 127.0.0.1 with a generated certificate that records every request. */
export interface TestReceiver {
  /** `https://127.0.0.1:<port><path>`; the default path is `/hook`. */
  url(path?: string): string;
  /** The self-signed certificate (PEM) to trust; valid for IP 127.0.0.1 and DNS `receiver.test`. */
  readonly caPem: string;
  /** The port the receiver listens on (127.0.0.1). */
  readonly port: number;
  /** Every request so far, in arrival order. */
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted so far (counted before the TLS handshake). */
  connections: number;
  /** Requests received and not answered yet (their response neither finished nor cut off). */
  inFlight: number;
  /** The most requests in flight at once since the start (or the last `clear()`). */
  peakInFlight: number;
  /** How to answer from now on, for every path or for one (a path's answer wins). Default `{ status: 204 }`. */
  respondWith(behaviour: ReceiverAnswer, scope?: BehaviourScope): void;
  /** Answers the next requests (to every path or to one) with these, in order, then falls back to `respondWith`. */
  respondNext(behaviours: readonly ReceiverBehaviour[], scope?: BehaviourScope): void;
  /**
   * Resolves with every matching request once `count` of them arrived. On timeout it rejects with a message listing
   * what did arrive.
   */
  waitForDelivery(wait?: WaitForDelivery): Promise<ReceivedRequest[]>;
  /** `waitForDelivery({ count, timeoutMs })`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  /** Forgets the recorded requests, the peak in flight and every behaviour (back to 204), e.g. in `beforeEach`. */
  clear(): void;
  /** Stops listening and destroys every open socket, hung ones included. */
  close(): Promise<void>;
}

const ANY_PATH = '*';
const DEFAULT_BEHAVIOUR: ReceiverBehaviour = { status: 204 };

interface Waiter {
  check(): void;
}

/** Starts a {@link TestReceiver} on a free loopback port. */
export async function startTestReceiver(): Promise<TestReceiver> {
  const certificate = await generateTestCertificate();
  const requests: ReceivedRequest[] = [];
  // Raw TCP sockets by client port: a TLSSocket cannot send a TCP reset itself, its underlying socket can.
  const sockets = new Map<number, Socket>();
  const waiters = new Set<Waiter>();
  const standing = new Map<string, ReceiverAnswer>();
  const queued = new Map<string, ReceiverBehaviour[]>();

  const choose = (received: ReceivedRequest): ReceiverBehaviour => {
    for (const key of [received.path, ANY_PATH]) {
      const next = queued.get(key)?.shift();
      if (next) return next;
    }
    const chosen = standing.get(received.path) ?? standing.get(ANY_PATH) ?? DEFAULT_BEHAVIOUR;
    return typeof chosen === 'function' ? chosen(received) : chosen;
  };

  const server = createServer({ key: certificate.keyPem, cert: certificate.certPem, keepAlive: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received = new ReceivedRequest(req.method ?? '', req.url ?? '', req.headers, Buffer.concat(chunks), Date.now());
      requests.push(received);
      receiver.inFlight++;
      receiver.peakInFlight = Math.max(receiver.peakInFlight, receiver.inFlight);
      res.on('close', () => receiver.inFlight--);
      for (const waiter of waiters) waiter.check();
      answer(choose(received), res, () => sockets.get(req.socket.remotePort ?? -1)?.resetAndDestroy());
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

  const receiver: TestReceiver = {
    url: (path = '/hook') => `https://127.0.0.1:${port}${path.startsWith('/') ? path : `/${path}`}`,
    caPem: certificate.certPem,
    port,
    requests,
    connections: 0,
    inFlight: 0,
    peakInFlight: 0,
    respondWith(behaviour, scope = {}) {
      standing.set(scope.path ?? ANY_PATH, behaviour);
    },
    respondNext(behaviours, scope = {}) {
      const key = scope.path ?? ANY_PATH;
      queued.set(key, [...(queued.get(key) ?? []), ...behaviours]);
    },
    waitForDelivery({ count = 1, timeoutMs = 5000, ...filter } = {}) {
      const matching = () => requests.filter((request) => request.matches(filter));
      if (matching().length >= count) return Promise.resolve(matching());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          const found = matching().length;
          const wanted = `${count} ${count === 1 ? 'delivery' : 'deliveries'} matching ${describeFilter(filter)}`;
          reject(new Error(`waitForDelivery: expected ${wanted} within ${timeoutMs} ms, ${found} matched; ${describeRequests(requests)}`));
        }, timeoutMs);
        const waiter: Waiter = {
          check() {
            if (matching().length < count) return;
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve(matching());
          },
        };
        waiters.add(waiter);
      });
    },
    waitForRequests(count, timeoutMs) {
      return receiver.waitForDelivery({ count, timeoutMs });
    },
    clear() {
      requests.length = 0;
      receiver.peakInFlight = receiver.inFlight;
      standing.clear();
      queued.clear();
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
