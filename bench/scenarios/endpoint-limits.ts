import { request } from 'undici';
import { sleep, wallMs } from '../lib/clock';
import { type BenchContext, type EndpointLimitsSize, round } from '../lib/context';
import type { BenchDatabase } from '../lib/databases';
import { deliveriesByUser } from '../lib/deliveries-by-user';
import type { EndpointStats, NeighbourBehaviour, NeighbourStats } from '../lib/receiver-types';
import type { Target } from '../lib/report';
import { type MainProcess, type ServiceEnvInput, startMainProcess } from '../lib/services';
import { type BenchEvent, benchEvent, enableWebhooks, postBatch, publishViaHttp, typeOfUser } from '../lib/workload';

const INSTANCES = 3;
/** The per-endpoint cap and the failures in a row that open a circuit: the service's defaults, set so the targets know them. */
const PER_ENDPOINT_CAP = 4;
const FAILURES_TO_OPEN = 5;
/** A short attempt deadline and cool-down (the defaults are 5 s and 30 s), so the dead endpoint's openings and probes take seconds. */
const TIMEOUT_MS = 1500;
const COOL_DOWN_MS = 2000;
/** The slow endpoint answers 200 after this long: well inside the deadline, long enough for attempts to pile up. */
const SLOW_ANSWER_MS = 300;
/** Events per publish call to the slow endpoint: small batches spread round-robin, so that every instance holds some. */
const SLOW_BATCH = 10;
/**
 * Arrivals at the dead endpoint at least this far apart are in different bursts: the deadline. Before the circuit opens,
 * rounds of requests that time out follow each other less than a deadline apart (the next request starts when one times
 * out); a probe comes a cool-down after the failure that opened the circuit, which ended a deadline after its request.
 */
const BURST_GAP_MS = TIMEOUT_MS;
/** How long the slow endpoint's deliveries may make no progress before the wait for them gives up. */
const STALL_MS = 15_000;
/** How long the attempts may take to show in the instances' counters once the receiver has seen them. */
const RECORD_WAIT_MS = 10_000;
/** Arrival times listed in the report (the rest are counted only). */
const LISTED_ARRIVALS = 200;
const SLOW_USER = 1;
const DEAD_USER = 2;
/** The dead endpoint's events get seqs from here, apart from the slow endpoint's. */
const DEAD_SEQ = 1_000_000;

/** Attempts one instance recorded during a phase (from its `/metrics` counters), and the circuits it opened. */
export interface InstanceActivity {
  readonly instance: number;
  /** Attempts that made a request (every outcome but `circuit_open` and `blocked`). */
  readonly requests: number;
  /** Attempts by outcome (those that happened). */
  readonly attempts: Record<string, number>;
  readonly circuitsOpened: number;
}

/** The stored deliveries of one endpoint's user, in brief. */
export interface StoredDeliveries {
  readonly rows: number;
  readonly byStatus: Record<string, number>;
  /** Attempts stored, of them skipped without a request (circuit open). */
  readonly attempts: number;
  readonly skipped: number;
}

export interface SlowEndpointResult {
  readonly answerDelayMs: number;
  readonly events: number;
  readonly queued: number;
  /** Until every publish call (batches of {@link SLOW_BATCH}, round-robin) was answered. */
  readonly publishMs: number;
  /** The most requests the endpoint had in flight at once (arrival to the end of its response), all instances together. */
  readonly peakInFlight: number;
  /** When that peak was first reached, in seconds from the first publish call. */
  readonly peakAtS: number;
  readonly cap: number;
  /** Time in flight summed over the requests, over the first arrival to the last answer. */
  readonly meanInFlight: number;
  readonly requests: number;
  /** Deliveries stored as DELIVERED. */
  readonly delivered: number;
  /** Requests beyond the first for the same event id. */
  readonly duplicates: number;
  /** Requests the service gave up on (its deadline) or whose socket closed before the answer. */
  readonly closedUnanswered: number;
  /** First publish call to the last answer. */
  readonly durationMs: number;
  /** The shortest duration the cap allows when it holds across instances: ⌈queued / cap⌉ × answer delay. */
  readonly durationAtCapMs: number;
  readonly perInstance: InstanceActivity[];
  readonly stored: StoredDeliveries;
}

/** Requests to the dead endpoint that arrived less than {@link BURST_GAP_MS} apart. */
export interface Burst {
  /** First arrival, in seconds from the start of the trickle. */
  readonly atS: number;
  /** From the previous burst's last arrival; null for the first burst. */
  readonly gapBeforeS: number | null;
  readonly requests: number;
  /** First to last arrival. */
  readonly spanS: number;
}

export interface DeadEndpointResult {
  readonly rate: number;
  readonly seconds: number;
  readonly published: number;
  readonly failedCalls: number;
  readonly requests: number;
  /** Requests the service gave up on (every request to this endpoint should end so: it never answers). */
  readonly closedUnanswered: number;
  readonly peakInFlight: number;
  /** When that peak was first reached, in seconds from the start of the trickle. */
  readonly peakAtS: number;
  /** The first burst: the requests (each a timeout) until the circuit was open in every instance. */
  readonly opening: Burst;
  /** The bursts after it, one per cool-down window: each should be one probe. */
  readonly coolDownWindows: Burst[];
  readonly burstGapMs: number;
  /** Arrival times in seconds from the start of the trickle (the first {@link LISTED_ARRIVALS}). */
  readonly arrivalsS: number[];
  readonly perInstance: InstanceActivity[];
  readonly stored: StoredDeliveries;
}

export interface EndpointLimitsResult {
  readonly settings: {
    readonly instances: number;
    readonly perEndpointConcurrency: number;
    readonly circuitFailuresToOpen: number;
    readonly circuitCoolDownMs: number;
    readonly deliveryTimeoutMs: number;
  };
  readonly slowEndpoint: SlowEndpointResult;
  readonly deadEndpoint: DeadEndpointResult;
  readonly targets: Record<string, Target>;
}

/** The three instances of one run, their database, and the bench's context. */
interface Run {
  readonly context: BenchContext;
  readonly database: BenchDatabase;
  readonly instances: readonly MainProcess[];
}

const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] endpoint-limits: ${message}\n`);

/**
 * Whether the per-endpoint limits hold across instances: three `node dist/service/main.js` on one database, one slow endpoint
 * (answers after 300 ms) with its events published round-robin through all three, whose peak of requests in flight is
 * held against the cap; then one dead endpoint (never answers) with a steady trickle of events through all three, whose
 * requests are counted until the circuit is open everywhere and then per cool-down window (one probe each).
 */
export async function endpointLimits(context: BenchContext, size: EndpointLimitsSize): Promise<EndpointLimitsResult> {
  const database = await context.server.create('endpoint_limits');
  const instances: MainProcess[] = [];
  try {
    const input: ServiceEnvInput = {
      database: database.env,
      caFile: context.caFile,
      delivery: {
        timeoutMs: TIMEOUT_MS,
        perEndpointConcurrency: PER_ENDPOINT_CAP,
        circuitFailures: FAILURES_TO_OPEN,
        circuitCoolDownMs: COOL_DOWN_MS,
      },
    };
    for (let i = 0; i < INSTANCES; i++) instances.push(await startMainProcess(input, context.logDir, `endpoint-limits-${i + 1}`));
    await context.receiver.call('setSecrets', await enableWebhooks(instances[0].base, DEAD_USER, context.bases));
    const run: Run = { context, database, instances };
    log(`slow endpoint: ${size.slowEvents} events round-robin over ${INSTANCES} instances, answered after ${SLOW_ANSWER_MS} ms`);
    const slowEndpoint = await slowEndpointPhase(run, size.slowEvents);
    log(`slow endpoint: peak ${slowEndpoint.peakInFlight} in flight (cap ${PER_ENDPOINT_CAP}), ${slowEndpoint.delivered} delivered`);
    log(
      `dead endpoint: ${size.deadRate} events/s for ${size.deadSeconds} s round-robin, deadline ${TIMEOUT_MS} ms, cool-down ${COOL_DOWN_MS} ms`,
    );
    const deadEndpoint = await deadEndpointPhase(run, size);
    log(
      `dead endpoint: ${deadEndpoint.opening.requests} requests until open everywhere, ` +
        `then per cool-down window ${JSON.stringify(deadEndpoint.coolDownWindows.map((window) => window.requests))}`,
    );
    return {
      settings: {
        instances: INSTANCES,
        perEndpointConcurrency: PER_ENDPOINT_CAP,
        circuitFailuresToOpen: FAILURES_TO_OPEN,
        circuitCoolDownMs: COOL_DOWN_MS,
        deliveryTimeoutMs: TIMEOUT_MS,
      },
      slowEndpoint,
      deadEndpoint,
      targets: targetsOf(slowEndpoint, deadEndpoint),
    };
  } finally {
    // Drops the requests the dead endpoint still holds, so the instances stop at once.
    await context.receiver.call('setNeighbours', []);
    await context.receiver.call('watchEndpoints', []);
    await Promise.all(instances.map((instance) => instance.stop()));
    await database.drop();
  }
}

/** The slow endpoint: every event published at once, round-robin in small batches; waits until each is answered. */
async function slowEndpointPhase(run: Run, events: number): Promise<SlowEndpointResult> {
  await setEndpoint(run, SLOW_USER, { behaviour: 'slow', delayMs: SLOW_ANSWER_MS });
  const before = await Promise.all(run.instances.map((instance) => readCounters(instance.base)));
  const startedAt = wallMs();
  const queued = await publishViaHttp(
    run.instances.map((instance) => instance.base),
    eventsFor(SLOW_USER, 0, events),
    SLOW_BATCH,
  );
  const publishMs = wallMs() - startedAt;
  const stats = await waitForAnswers(run, SLOW_USER, queued);
  const perInstance = await waitForAttempts(run, before, queued);
  const stored = await storedDeliveries(run, SLOW_USER, queued, 'slow endpoint');
  await checkSignatures(run, 'slow endpoint');
  const firstAt = stats.arrivals[0] ?? startedAt;
  return {
    answerDelayMs: SLOW_ANSWER_MS,
    events,
    queued,
    publishMs: round(publishMs),
    peakInFlight: stats.peakInFlight,
    peakAtS: round((stats.peakAt - startedAt) / 1000, 2),
    cap: PER_ENDPOINT_CAP,
    meanInFlight: round(stats.busyMs / Math.max(1, stats.lastAnsweredAt - firstAt), 2),
    requests: stats.requests,
    delivered: stored.byStatus.DELIVERED ?? 0,
    duplicates: stats.requests - stats.uniqueEvents,
    closedUnanswered: stats.closedUnanswered,
    durationMs: round(stats.lastAnsweredAt - startedAt),
    durationAtCapMs: Math.ceil(queued / PER_ENDPOINT_CAP) * SLOW_ANSWER_MS,
    perInstance,
    stored,
  };
}

/** The dead endpoint: a steady trickle of events through every instance; its requests, split into bursts. */
async function deadEndpointPhase(run: Run, size: EndpointLimitsSize): Promise<DeadEndpointResult> {
  await setEndpoint(run, DEAD_USER, { behaviour: 'hang' });
  const before = await Promise.all(run.instances.map((instance) => readCounters(instance.base)));
  const trickle = await publishTrickle(run, DEAD_USER, size.deadRate, size.deadSeconds);
  // Every event is attempted once in the window (a request, or skipped while the circuit is open): all are recorded
  // once the counters hold as many attempts as events; the last requests end at their deadline.
  const perInstance = await waitForAttempts(run, before, trickle.published);
  const stats = await waitForNoneInFlight(run, DEAD_USER);
  const stored = await storedDeliveries(run, DEAD_USER, trickle.published, 'dead endpoint');
  await checkSignatures(run, 'dead endpoint');
  const offsets = stats.arrivals.map((at) => at - trickle.startedAt);
  const [opening = { atS: 0, gapBeforeS: null, requests: 0, spanS: 0 }, ...coolDownWindows] = bursts(offsets, BURST_GAP_MS);
  return {
    rate: size.deadRate,
    seconds: size.deadSeconds,
    published: trickle.published,
    failedCalls: trickle.failedCalls,
    requests: stats.requests,
    closedUnanswered: stats.closedUnanswered,
    peakInFlight: stats.peakInFlight,
    peakAtS: round((stats.peakAt - trickle.startedAt) / 1000, 2),
    opening,
    coolDownWindows,
    burstGapMs: BURST_GAP_MS,
    arrivalsS: offsets.slice(0, LISTED_ARRIVALS).map((ms) => round(ms / 1000, 2)),
    perInstance,
    stored,
  };
}

/** The targets: the cap holds across instances; a dead endpoint costs at most one opening's worth of timeouts, then one probe per cool-down. */
function targetsOf(slow: SlowEndpointResult, dead: DeadEndpointResult): Record<string, Target> {
  const timeoutBound = FAILURES_TO_OPEN + PER_ENDPOINT_CAP - 1;
  const probes = dead.coolDownWindows.map((window) => window.requests);
  return {
    // Met only with every event delivered: a peak under the cap says nothing when the events never arrived.
    endpointLimitsPeakInFlightAtMostCap: {
      peakInFlight: slow.peakInFlight,
      cap: slow.cap,
      delivered: slow.delivered,
      queued: slow.queued,
      met: slow.peakInFlight <= slow.cap && slow.delivered === slow.queued,
    },
    endpointLimitsTimeoutsPerOpeningWithinBound: {
      timeouts: dead.opening.requests,
      bound: timeoutBound,
      boundIs: 'circuit failures to open + per-endpoint cap - 1',
      met: dead.opening.requests <= timeoutBound,
    },
    endpointLimitsOneProbePerCoolDown: {
      probesPerCoolDown: probes,
      met: probes.length > 0 && probes.every((count) => count === 1),
      ...(probes.length === 0 ? { note: 'no cool-down window observed: the requests never stopped for a cool-down' } : {}),
    },
  };
}

/** Makes `userId`'s endpoint the only neighbour (answering as `behaviour`) and the only watched endpoint, with fresh counts. */
async function setEndpoint(run: Run, userId: number, behaviour: NeighbourBehaviour): Promise<void> {
  await run.context.receiver.call('setNeighbours', [[String(userId), behaviour]]);
  await run.context.receiver.call('watchEndpoints', [String(userId)]);
}

function eventsFor(userId: number, from: number, count: number): BenchEvent[] {
  return Array.from({ length: count }, (_, i) => ({ ...benchEvent(from + i, 1), userId, type: typeOfUser(userId) }));
}

/**
 * Publishes one event for `userId` every 1/`rate` s for `seconds`, round-robin over the instances, one call each on a
 * fixed schedule (not waiting for earlier calls); resolves once every call has answered. A failed call (a 503 when the
 * database is slow) is counted, not retried: its event was not acknowledged.
 */
async function publishTrickle(run: Run, userId: number, rate: number, seconds: number) {
  const count = Math.round(rate * seconds);
  const calls: Promise<number | null>[] = [];
  const startedAt = wallMs();
  for (let i = 0; i < count; i++) {
    const wait = startedAt + (i * 1000) / rate - wallMs();
    if (wait > 1) await sleep(wait);
    const base = run.instances[i % run.instances.length].base;
    calls.push(
      postBatch(base, eventsFor(userId, DEAD_SEQ + i, 1)).then(
        (result) => result.queuedDeliveries,
        () => null,
      ),
    );
  }
  const queued = await Promise.all(calls);
  const published = queued.reduce<number>((sum, count) => sum + (count ?? 0), 0);
  return { startedAt, published, failedCalls: queued.filter((count) => count === null).length };
}

async function endpointStats(run: Run, userId: number): Promise<EndpointStats> {
  const all = await run.context.receiver.call<Record<string, EndpointStats>>('endpointStats');
  return all[String(userId)];
}

/** Waits until `expected` distinct events reached the endpoint and none is in flight, or until it made no progress for {@link STALL_MS}. */
async function waitForAnswers(run: Run, userId: number, expected: number): Promise<EndpointStats> {
  let progress = -1;
  let progressAt = wallMs();
  for (;;) {
    const stats = await endpointStats(run, userId);
    if (stats.uniqueEvents >= expected && stats.inFlight === 0) return stats;
    const ended = stats.answered + stats.closedUnanswered;
    if (stats.requests + ended !== progress) {
      progress = stats.requests + ended;
      progressAt = wallMs();
    } else if (wallMs() - progressAt > STALL_MS) {
      return stats;
    }
    await sleep(100);
  }
}

/** Waits until the endpoint holds no request open (the service's deadline ends the last ones), at most a deadline and then some. */
async function waitForNoneInFlight(run: Run, userId: number): Promise<EndpointStats> {
  const deadline = wallMs() + TIMEOUT_MS + RECORD_WAIT_MS;
  for (;;) {
    const stats = await endpointStats(run, userId);
    if (stats.inFlight === 0 || wallMs() > deadline) return stats;
    await sleep(100);
  }
}

/**
 * Waits until the instances' counters, together, hold `expected` more attempts than `before` (attempts are counted when
 * recorded, just after their request ends), at most {@link RECORD_WAIT_MS} after the last progress; returns each instance's share.
 */
async function waitForAttempts(run: Run, before: readonly Counters[], expected: number): Promise<InstanceActivity[]> {
  let recorded = -1;
  let progressAt = wallMs();
  for (;;) {
    const activity = activityOf(before, await Promise.all(run.instances.map((instance) => readCounters(instance.base))));
    const total = activity.reduce((sum, instance) => sum + Object.values(instance.attempts).reduce((a, b) => a + b, 0), 0);
    if (total >= expected) return activity;
    if (total !== recorded) {
      recorded = total;
      progressAt = wallMs();
    } else if (wallMs() - progressAt > RECORD_WAIT_MS) {
      return activity;
    }
    await sleep(200);
  }
}

/** The counters of one instance this scenario reads. */
interface Counters {
  readonly attempts: Record<string, number>;
  readonly circuitsOpened: number;
}

const ATTEMPTS_LINE = /^webhook_attempts_total\{outcome="(\w+)"\} (\d+)/;
const CIRCUITS_OPENED_LINE = /^webhook_circuits_opened_total (\d+)/;
/** Attempt outcomes that made no request. */
const NO_REQUEST = new Set(['circuit_open', 'blocked']);

/** `webhook_attempts_total` by outcome and `webhook_circuits_opened_total`, from the instance's `GET /metrics`. */
async function readCounters(base: string): Promise<Counters> {
  const response = await request(`${base}/metrics`);
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`GET ${base}/metrics: ${response.statusCode} ${text.slice(0, 200)}`);
  const attempts: Record<string, number> = {};
  let circuitsOpened = 0;
  for (const line of text.split('\n')) {
    const attempt = ATTEMPTS_LINE.exec(line);
    if (attempt) attempts[attempt[1]] = Number(attempt[2]);
    const opened = CIRCUITS_OPENED_LINE.exec(line);
    if (opened) circuitsOpened = Number(opened[1]);
  }
  return { attempts, circuitsOpened };
}

/** What each instance did between two readings of its counters. */
function activityOf(before: readonly Counters[], after: readonly Counters[]): InstanceActivity[] {
  return after.map((now, i) => {
    const attempts: Record<string, number> = {};
    for (const [outcome, count] of Object.entries(now.attempts)) {
      const delta = count - (before[i].attempts[outcome] ?? 0);
      if (delta > 0) attempts[outcome] = delta;
    }
    const requests = Object.entries(attempts).reduce((sum, [outcome, count]) => (NO_REQUEST.has(outcome) ? sum : sum + count), 0);
    return { instance: i + 1, requests, attempts, circuitsOpened: now.circuitsOpened - before[i].circuitsOpened };
  });
}

/** Splits arrival offsets (ms, ascending) into bursts of arrivals less than `gapMs` apart. */
export function bursts(offsets: readonly number[], gapMs: number): Burst[] {
  const found: { first: number; last: number; requests: number; gapBefore: number | null }[] = [];
  for (const at of offsets) {
    const current = found.at(-1);
    if (current && at - current.last < gapMs) {
      current.last = at;
      current.requests++;
    } else {
      found.push({ first: at, last: at, requests: 1, gapBefore: current ? at - current.last : null });
    }
  }
  const seconds = (ms: number) => round(ms / 1000, 2);
  return found.map(({ first, last, requests, gapBefore }) => ({
    atS: seconds(first),
    gapBeforeS: gapBefore === null ? null : seconds(gapBefore),
    requests,
    spanS: seconds(last - first),
  }));
}

/** The user's deliveries as stored; an acknowledged event without a row is lost (a failure of the run). */
async function storedDeliveries(run: Run, userId: number, queued: number, phase: string): Promise<StoredDeliveries> {
  const { neighbour } = await deliveriesByUser(run.database, userId);
  if (neighbour.rows < queued)
    run.context.failures.push(`endpoint-limits (${phase}): ${queued - neighbour.rows} of ${queued} events without a delivery row`);
  return { rows: neighbour.rows, byStatus: neighbour.byStatus, attempts: neighbour.attempts, skipped: neighbour.skipped };
}

async function checkSignatures(run: Run, phase: string): Promise<void> {
  const { badSignatures } = await run.context.receiver.call<NeighbourStats>('neighbourStats');
  if (badSignatures > 0) run.context.failures.push(`endpoint-limits (${phase}): ${badSignatures} bad signature(s)`);
}
