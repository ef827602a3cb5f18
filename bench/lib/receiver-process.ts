// The webhook receiver, in its own process so that its CPU (TLS, HMAC checks) is not the service's.
// HTTPS on several loopback addresses (one origin each), counts requests by X-Service-Event-Id,
// verifies every signature and answers 200, or a mix of faults when told to. Neighbours (chosen users)
// get an endpoint of their own that hangs or answers slowly, counted apart from everyone else. Watched
// endpoints (chosen users) also get their requests in flight counted, with the peak and each arrival's time.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { writeFileSync } from 'node:fs';
import { generateTestCertificate } from '../../src/testing/test-certificate';
import { wallMs } from './clock';
import { serveIpc } from './ipc';
import { library } from './library';
import type {
  Arrival,
  EndpointStats,
  FaultRates,
  NeighbourBehaviour,
  NeighbourStats,
  ReceiverStats,
  ReceivedAttempt,
  ReceiverStart,
} from './receiver-types';

const { verifyWebhookSignature } = library();
const HANG_MS = 6500;

let secrets = new Map<string, string>();
let faults: FaultRates | null = null;
let keepAttempts = false;
/** Delay before each 200, like a receiver doing real work; 0 answers at once. */
let okDelayMs = 0;
let state = freshState();
/** Users whose endpoint hangs or answers slowly, by user id (the `<userId>` of `/hook/<userId>/<type>`). */
let neighbours = new Map<string, NeighbourBehaviour>();
let neighbourState = freshNeighbourState();
/** Neighbour requests held open (never answered, or not yet). */
const openNeighbourRequests = new Set<ServerResponse>();
const servers: Server[] = [];
/** Watched endpoints by user id: their requests in flight and arrivals (see {@link watchRequest}). */
let watched = new Map<string, EndpointWatch>();
// Raw TCP sockets by connection: a TLSSocket cannot send a TCP reset itself, its underlying socket can. The key holds
// the server's address too: Linux gives connections to different loopback hosts the same client port, and a key by
// client port alone once reset another event's connection (its attempt never reached the receiver).
const rawSockets = new Map<string, Socket>();

function connectionKey(socket: Socket): string {
  return `${socket.localAddress}:${socket.localPort}<${socket.remoteAddress}:${socket.remotePort}`;
}

function freshState() {
  return {
    requests: 0,
    ok: 0,
    badSignatures: 0,
    badSignatureSamples: [] as string[],
    byEvent: new Map<string, number>(),
    /** Requests beyond the first for the same event id. */
    duplicates: 0,
    attempts: new Map<string, ReceivedAttempt[]>(),
    firstAt: 0,
    lastOkAt: 0,
    latencies: [] as number[],
    /** First arrival of each event id that carried `payload.t`, whatever its attempt number. */
    arrivals: [] as Arrival[],
    answered: { ok: 0, error500: 0, hang: 0, reset: 0, redirect302: 0 },
    /** TCP connections accepted, TLS handshakes completed, and of those how many resumed a session. */
    connections: 0,
    tlsHandshakes: 0,
    tlsResumed: 0,
  };
}

function freshNeighbourState() {
  return {
    requests: 0,
    answeredOk: 0,
    abandonedByClient: 0,
    badSignatures: 0,
    events: new Set<string>(),
    byAttemptNumber: {} as Record<number, number>,
  };
}

/** A watched endpoint's counts as they accrue: {@link EndpointStats}, with the event ids seen. */
type EndpointWatch = { -readonly [K in Exclude<keyof EndpointStats, 'uniqueEvents'>]: EndpointStats[K] } & { readonly events: Set<string> };

function freshWatch(): EndpointWatch {
  return {
    requests: 0,
    inFlight: 0,
    peakInFlight: 0,
    peakAt: 0,
    answered: 0,
    closedUnanswered: 0,
    busyMs: 0,
    lastAnsweredAt: 0,
    arrivals: [],
    events: new Set(),
  };
}

/**
 * Counts a request to a watched endpoint as in flight from now (its headers arrived) until its response is ended
 * ('prefinish': `res.end()` has queued the whole response; 'finish' comes a few ticks later, after the client may
 * already have read the answer and sent its next request) or closed unanswered ('close' without it: the client gave up,
 * or the socket was dropped).
 */
function watchRequest(req: IncomingMessage, res: ServerResponse): void {
  const watch = watched.get((req.url ?? '').split('/')[2]);
  if (!watch) return;
  const arrivedAt = wallMs();
  watch.requests++;
  watch.arrivals.push(arrivedAt);
  watch.events.add((req.headers['x-service-event-id'] as string | undefined) ?? '');
  watch.inFlight++;
  if (watch.inFlight > watch.peakInFlight) {
    watch.peakInFlight = watch.inFlight;
    watch.peakAt = arrivedAt;
  }
  let ended = false;
  const end = (answered: boolean) => {
    if (ended) return;
    ended = true;
    const now = wallMs();
    watch.inFlight--;
    watch.busyMs += now - arrivedAt;
    if (answered) {
      watch.answered++;
      watch.lastAnsweredAt = now;
    } else {
      watch.closedUnanswered++;
    }
  };
  res.on('prefinish', () => end(true));
  res.on('close', () => end(false));
}

function endpointStats(): Record<string, EndpointStats> {
  return Object.fromEntries([...watched].map(([userId, { events, ...counts }]) => [userId, { ...counts, uniqueEvents: events.size }]));
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  watchRequest(req, res);
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const now = wallMs();
    const rawBody = Buffer.concat(chunks);
    const [, , userId, type] = (req.url ?? '').split('/');
    const secret = secrets.get(`${userId}/${type}`);
    const timestamp = req.headers['x-service-timestamp'] as string | undefined;
    const signature = req.headers['x-service-signature'] as string | undefined;
    const valid = secret !== undefined && verifyWebhookSignature({ secret, timestamp, signature, rawBody, toleranceSeconds: 300 });
    const neighbour = neighbours.get(userId);
    if (neighbour) return handleNeighbour(neighbour, valid, req, res);
    state.requests++;
    if (state.firstAt === 0) state.firstAt = now;
    if (!valid) {
      state.badSignatures++;
      if (state.badSignatureSamples.length < 5)
        state.badSignatureSamples.push(`${req.url} ts=${timestamp} sig=${signature?.slice(0, 12)}…`);
    }
    const eventId = (req.headers['x-service-event-id'] as string | undefined) ?? '';
    const attempt = Number(req.headers['x-service-attempt'] ?? 1);
    const seen = state.byEvent.get(eventId) ?? 0;
    if (seen > 0) state.duplicates++;
    state.byEvent.set(eventId, seen + 1);
    const body = JSON.parse(rawBody.toString('utf8')) as { payload?: { t?: number; seq?: number } };
    if (attempt === 1 && typeof body.payload?.t === 'number') state.latencies.push(now - body.payload.t);
    if (seen === 0 && typeof body.payload?.t === 'number')
      state.arrivals.push([now - body.payload.t, Number(userId), now, body.payload.seq ?? -1]);
    const behaviour = chooseBehaviour();
    if (keepAttempts) {
      const list = state.attempts.get(eventId) ?? [];
      list.push({ attempt, at: now, behaviour, seq: body.payload?.seq ?? null, validSignature: valid });
      state.attempts.set(eventId, list);
    }
    answer(behaviour, req, res);
  });
}

/** A neighbour's endpoint: `hang` never answers (the client gives up), `slow` answers 200 after its delay. */
function handleNeighbour(neighbour: NeighbourBehaviour, valid: boolean, req: IncomingMessage, res: ServerResponse): void {
  const counts = neighbourState;
  counts.requests++;
  if (!valid) counts.badSignatures++;
  counts.events.add((req.headers['x-service-event-id'] as string | undefined) ?? '');
  const attempt = Number(req.headers['x-service-attempt'] ?? 1);
  counts.byAttemptNumber[attempt] = (counts.byAttemptNumber[attempt] ?? 0) + 1;
  openNeighbourRequests.add(res);
  let answered = false;
  res.on('close', () => {
    openNeighbourRequests.delete(res);
    if (!answered && counts === neighbourState) counts.abandonedByClient++;
  });
  if (neighbour.behaviour === 'hang') return;
  setTimeout(() => {
    if (res.destroyed) return;
    answered = true;
    if (counts === neighbourState) counts.answeredOk++;
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
    res.end('ok');
  }, neighbour.delayMs ?? 0);
}

function dropNeighbourRequests(): void {
  for (const res of openNeighbourRequests) res.socket?.destroy();
  openNeighbourRequests.clear();
}

function answerOk(res: ServerResponse): void {
  state.ok++;
  state.lastOkAt = wallMs();
  res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
  res.end('ok');
}

function chooseBehaviour(): ReceivedAttempt['behaviour'] {
  if (!faults) return 'ok';
  let roll = Math.random();
  for (const [behaviour, rate] of [
    ['error500', faults.error500],
    ['hang', faults.hang],
    ['reset', faults.reset],
    ['redirect302', faults.redirect302],
  ] as const) {
    if (roll < rate) return behaviour;
    roll -= rate;
  }
  return 'ok';
}

function answer(behaviour: ReceivedAttempt['behaviour'], req: IncomingMessage, res: ServerResponse): void {
  state.answered[behaviour]++;
  switch (behaviour) {
    case 'ok':
      if (okDelayMs > 0) setTimeout(answerOk, okDelayMs, res);
      else answerOk(res);
      return;
    case 'error500':
      res.writeHead(500, { 'content-type': 'text/plain', 'content-length': '4' });
      res.end('oops');
      return;
    case 'redirect302':
      res.writeHead(302, { location: `https://127.0.0.1${req.url}`, 'content-length': '0' });
      res.end();
      return;
    case 'hang':
      setTimeout(() => req.socket.destroy(), HANG_MS).unref();
      return;
    case 'reset':
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
      res.write('partial', () => rawSockets.get(connectionKey(req.socket))?.resetAndDestroy());
      return;
  }
}

async function start(origins: number, caFile: string, dnsNames: readonly string[] = []): Promise<ReceiverStart> {
  const hosts = Array.from({ length: origins }, (_, i) => `127.0.0.${i + 1}`);
  const { keyPem, certPem } = await generateTestCertificate(hosts, dnsNames);
  writeFileSync(caFile, certPem);
  const bases: string[] = [];
  for (const host of hosts) {
    const server = createServer({ key: keyPem, cert: certPem, keepAlive: true }, handle);
    server.requestTimeout = 0;
    server.headersTimeout = 0;
    server.keepAliveTimeout = 30_000;
    server.on('tlsClientError', () => undefined);
    server.on('secureConnection', (socket: import('node:tls').TLSSocket) => {
      state.tlsHandshakes++;
      if (socket.isSessionReused()) state.tlsResumed++;
    });
    server.on('connection', (socket: Socket) => {
      state.connections++;
      const key = connectionKey(socket);
      rawSockets.set(key, socket);
      socket.on('close', () => rawSockets.get(key) === socket && rawSockets.delete(key));
    });
    await new Promise<void>((resolve) => server.listen(0, host, resolve));
    servers.push(server);
    bases.push(`https://${host}:${(server.address() as AddressInfo).port}`);
  }
  return { bases, caPem: certPem };
}

function stats(): ReceiverStats {
  return {
    requests: state.requests,
    ok: state.ok,
    uniqueEvents: state.byEvent.size,
    duplicates: state.duplicates,
    badSignatures: state.badSignatures,
    badSignatureSamples: state.badSignatureSamples,
    firstAt: state.firstAt,
    lastOkAt: state.lastOkAt,
    answered: state.answered,
    connections: state.connections,
    tlsHandshakes: state.tlsHandshakes,
    tlsResumed: state.tlsResumed,
  };
}

serveIpc({
  start: (origins: number, caFile: string, dnsNames?: string[]) => start(origins, caFile, dnsNames),
  setSecrets: (entries: [string, string][]) => {
    secrets = new Map(entries);
  },
  /** Adds to the secrets known (for webhooks enabled while a scenario runs). */
  addSecrets: (entries: [string, string][]) => {
    for (const [key, secret] of entries) secrets.set(key, secret);
  },
  /** Closes every keep-alive connection that has no request in flight, as a receiver's own idle timeout would. */
  closeIdleConnections: () => {
    for (const server of servers) server.closeIdleConnections();
  },
  configure: (options: { faults?: FaultRates | null; keepAttempts?: boolean; okDelayMs?: number }) => {
    okDelayMs = options.okDelayMs ?? 0;
    faults = options.faults ?? null;
    keepAttempts = options.keepAttempts ?? false;
  },
  /** Neighbour endpoints by user id (replaces the previous set; drops any request a neighbour still holds open). */
  setNeighbours: (entries: [string, NeighbourBehaviour][]) => {
    dropNeighbourRequests();
    neighbours = new Map(entries);
    neighbourState = freshNeighbourState();
  },
  /** Resets the counts, the neighbours' and the watched endpoints' included (their endpoints keep their behaviour). */
  reset: () => {
    state = freshState();
    neighbourState = freshNeighbourState();
    watched = new Map([...watched.keys()].map((userId) => [userId, freshWatch()]));
  },
  /** Watches these users' endpoints (replaces the previous set, with fresh counts); see {@link watchRequest}. */
  watchEndpoints: (userIds: string[]) => {
    watched = new Map(userIds.map((userId) => [userId, freshWatch()]));
  },
  endpointStats,
  stats,
  neighbourStats: (): NeighbourStats => {
    const { events, ...counts } = neighbourState;
    return { ...counts, uniqueEvents: events.size, open: openNeighbourRequests.size };
  },
  latencies: () => state.latencies,
  arrivals: () => state.arrivals,
  /** How many events with `from` ≤ seq < `to` arrived. */
  arrivalsBetween: (from: number, to: number) =>
    state.arrivals.reduce((count, [, , , seq]) => (seq >= from && seq < to ? count + 1 : count), 0),
  attempts: () => [...state.attempts.entries()],
});
