import { sleep, wallMs } from '../lib/clock';
import { type BenchContext, type IsolationSize, round } from '../lib/context';
import { deliveriesByUser, type DeliverySummary } from '../lib/deliveries-by-user';
import type { IpcChild } from '../lib/ipc';
import type { Arrival, NeighbourBehaviour, NeighbourStats, ReceiverStats } from '../lib/receiver-types';
import { startIpcService } from '../lib/services';
import { type BenchEvent, benchEvent, enableWebhooks, postBatch, typeOfUser, waitForArrivals } from '../lib/workload';
import { percentiles, type Percentiles } from './latency';

/** Seconds of healthy load before each measured run (fresh service: cold JIT, empty pools); not measured. */
const WARMUP_SECONDS = 3;
/** The slow neighbour answers 200 this long after the request, under the service's 5 s deadline. */
export const SLOW_NEIGHBOUR_MS = 4500;
const NEIGHBOUR_BATCH = 500;
/** Target of issue 11: healthy p99 with a neighbour at most this many times the baseline p99. */
const MAX_P99_RATIO = 2;

type RunKind = 'baseline' | 'hanging' | 'slow';

/**
 * How the healthy load is published: `publisher`, `WebhookPublisher.publishMany` inside the service (over IPC, `payload.t`
 * stamped there); `http`, one `POST /api/v1/internal/notifications/events` per event, as a producing service does it
 * (`payload.t` stamped by the producer before the request, so the latency includes the HTTP call).
 */
export type PublishPath = 'publisher' | 'http';

interface Latencies extends Percentiles {
  readonly count: number;
}

export interface IsolationRun {
  readonly kind: RunKind;
  readonly neighbour: {
    readonly userId: number;
    readonly origin: string;
    readonly behaviour: NeighbourBehaviour;
    readonly events: number;
    readonly queued: number;
    readonly publishMs: number;
  } | null;
  readonly healthy: {
    readonly users: number;
    readonly seconds: number;
    /** Events acknowledged by the publisher (one publish call each, one user each). */
    readonly published: number;
    /** Publish calls that failed, or had no answer by the end of the bounded wait (not acknowledged, so not counted above). */
    readonly publishFailures: number;
    readonly publishUnanswered: number;
    readonly achievedRate: number;
    /** Arrived at the receiver by the end of the bounded wait. */
    readonly delivered: number;
    /** Not arrived by then (stragglers are counted here). */
    readonly undelivered: number;
    /** Acknowledged events without a delivery row. */
    readonly lost: number;
    readonly badSignatures: number;
    readonly duplicates: number;
    /** Publish call (inside the service) to first arrival at the receiver, whatever the attempt number; delivered events only. */
    readonly publishToArrivalMs: Latencies | null;
    /** The same, split: healthy users whose endpoint shares the neighbour's origin (its host), and the rest. */
    readonly sameOriginAsNeighbourMs: Latencies | null;
    readonly otherOriginsMs: Latencies | null;
    /** Until the publish call answered: in the service (`publisher`), or the producer's whole HTTP call (`http`). */
    readonly publishToCommitMs: Latencies | null;
    /** From the first publish of the load to the first healthy arrival. */
    readonly firstArrivalAfterLoadStartMs: number | null;
    /** Healthy arrivals per 5 s from the start of the load (the last buckets are the straggler wait). */
    readonly arrivalsPer5s: number[];
    /** How long the bounded wait after the load took. */
    readonly waitedAfterLoadMs: number;
    /** Healthy deliveries as stored at the end (warm-up ones included). */
    readonly stored: DeliverySummary;
  };
  /** The neighbour's deliveries at the end of the bounded wait: at the receiver, and as stored. */
  readonly neighbourOutcome: {
    readonly receiver: NeighbourStats;
    readonly stored: DeliverySummary;
    /** Neighbour events acknowledged without a delivery row. */
    readonly lost: number;
    /** Stored attempts beyond the requests that reached the endpoint (+ those still open): attempts that never reached it. */
    readonly attemptsNotReachingEndpoint: number;
  } | null;
}

export interface IsolationResult {
  readonly path: PublishPath;
  readonly size: IsolationSize & { readonly warmupSeconds: number; readonly slowNeighbourMs: number; readonly origins: number };
  readonly runs: Partial<Record<RunKind, IsolationRun>>;
  /** Healthy latency with the neighbour / baseline. */
  readonly ratios: Partial<Record<'hanging' | 'slow', { p50: number; p99: number; max: number } | null>>;
  readonly targets: Record<string, { met: boolean } & Record<string, unknown>>;
}

const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] isolation: ${message}\n`);

/**
 * Issue 11: the throughput-style healthy load (`users` users over the receiver's origins, one event per user
 * per second) three ways, each on a fresh database and service: alone; with one neighbour whose endpoint
 * accepts the request and never answers; with one whose endpoint answers 200 after 4.5 s; the neighbour's
 * `neighbourEvents` are published just before the load.
 */
export async function isolation(context: BenchContext, size: IsolationSize, path: PublishPath = 'publisher'): Promise<IsolationResult> {
  const runs: Partial<Record<RunKind, IsolationRun>> = {};
  for (const kind of ['baseline', 'hanging', 'slow'] as const) {
    log(
      `${kind} (${path}): ${size.users} users × 1 event/s for ${size.seconds} s${kind === 'baseline' ? '' : `, after ${size.neighbourEvents} events to a ${kind} neighbour`}`,
    );
    const run = await isolationRun(context, size, kind, path);
    runs[kind] = run;
    const { publishToArrivalMs: latency, delivered, published } = run.healthy;
    log(`${kind}: healthy p50 ${latency?.p50} ms, p99 ${latency?.p99} ms, max ${latency?.max} ms; ${delivered} of ${published} delivered`);
  }
  const baseline = runs.baseline?.healthy.publishToArrivalMs;
  const ratioOf = (kind: 'hanging' | 'slow') => {
    const latency = runs[kind]?.healthy.publishToArrivalMs;
    if (!baseline || !latency) return null;
    return {
      p50: round(latency.p50 / baseline.p50, 2),
      p99: round(latency.p99 / baseline.p99, 2),
      max: round(latency.max / baseline.max, 2),
    };
  };
  const ratios = { hanging: ratioOf('hanging'), slow: ratioOf('slow') };
  const targets: IsolationResult['targets'] = {};
  const via = path === 'http' ? 'ViaHttp' : '';
  for (const kind of ['hanging', 'slow'] as const) {
    const run = runs[kind];
    if (!run) continue;
    const ratio = ratios[kind]?.p99 ?? null;
    const name = kind === 'hanging' ? 'Hanging' : 'Slow';
    // The healthy users whose endpoints share the neighbour's host (one origin of the receiver's) against the whole baseline.
    const sharedHostP99 = run.healthy.sameOriginAsNeighbourMs?.p99 ?? null;
    const sharedHostRatio = baseline && sharedHostP99 !== null ? round(sharedHostP99 / baseline.p99, 2) : null;
    targets[`isolation${name}NeighbourSharedHostP99AtMost2xBaseline${via}`] = {
      baselineP99: baseline?.p99 ?? null,
      p99: sharedHostP99,
      ratio: sharedHostRatio,
      met: sharedHostRatio !== null && sharedHostRatio <= MAX_P99_RATIO && run.healthy.undelivered === 0,
    };
    targets[`isolation${name}NeighbourP99AtMost2xBaseline${via}`] = {
      baselineP99: baseline?.p99 ?? null,
      p99: run.healthy.publishToArrivalMs?.p99 ?? null,
      ratio,
      met: ratio !== null && ratio <= MAX_P99_RATIO && run.healthy.undelivered === 0,
      ...(run.healthy.undelivered > 0
        ? { note: `${run.healthy.undelivered} healthy events undelivered: the p99 of the delivered ones understates it` }
        : {}),
    };
  }
  const undelivered = Object.fromEntries(Object.entries(runs).map(([kind, run]) => [kind, run.healthy.undelivered]));
  targets[`isolationEveryHealthyEventDelivered${via}`] = { undelivered, met: Object.values(undelivered).every((count) => count === 0) };
  const neighbourLost = Object.fromEntries(
    Object.entries(runs).flatMap(([kind, run]) => (run.neighbourOutcome ? [[kind, run.neighbourOutcome.lost]] : [])),
  );
  targets[`isolationNoNeighbourEventLost${via}`] = { lost: neighbourLost, met: Object.values(neighbourLost).every((count) => count === 0) };
  return {
    path,
    size: { ...size, warmupSeconds: WARMUP_SECONDS, slowNeighbourMs: SLOW_NEIGHBOUR_MS, origins: context.bases.length },
    runs,
    ratios,
    targets,
  };
}

async function isolationRun(context: BenchContext, size: IsolationSize, kind: RunKind, path: PublishPath): Promise<IsolationRun> {
  const { users, seconds } = size;
  const neighbourId = users + 1;
  const origins = context.bases.length;
  const behaviour: NeighbourBehaviour | null =
    kind === 'hanging' ? { behaviour: 'hang' } : kind === 'slow' ? { behaviour: 'slow', delayMs: SLOW_NEIGHBOUR_MS } : null;
  const database = await context.server.create(`isolation_${path}_${kind}`);
  const service = await startIpcService({ database: database.env, caFile: context.caFile }, context.logDir, `isolation-${path}-${kind}`);
  const publishOne = publishOneVia(path, service);
  try {
    // The neighbour (user users+1) is enabled in every run, the baseline included, on the origin its id
    // gives it like every user: it shares that origin with users/origins healthy users.
    await context.receiver.call('setSecrets', await enableWebhooks(service.base, neighbourId, context.bases));
    await context.receiver.call('setNeighbours', behaviour ? [[String(neighbourId), behaviour]] : []);
    await context.receiver.call('reset');

    const warmup = users * WARMUP_SECONDS;
    const warm = await publishSteadily(context.receiver, publishOne, users, 0, warmup, 30_000);
    await context.receiver.call('reset');

    let neighbour: IsolationRun['neighbour'] = null;
    if (behaviour) {
      const startedAt = wallMs();
      let queued = 0;
      for (let i = 0; i < size.neighbourEvents; i += NEIGHBOUR_BATCH) {
        const batch = Array.from({ length: Math.min(NEIGHBOUR_BATCH, size.neighbourEvents - i) }, (_, j) =>
          neighbourEvent(neighbourId, 1_000_000 + i + j),
        );
        queued += (await service.ipc.call<{ queued: number }>('publish', batch)).queued;
      }
      neighbour = {
        userId: neighbourId,
        origin: context.bases[neighbourId % origins],
        behaviour,
        events: size.neighbourEvents,
        queued,
        publishMs: round(wallMs() - startedAt),
      };
    }

    const total = users * seconds;
    const load = await publishSteadily(context.receiver, publishOne, users, warmup, total, size.stragglerWaitSeconds * 1000);
    const arrivals = (await context.receiver.call<Arrival[]>('arrivals')).filter(([, , , seq]) => seq >= warmup && seq < warmup + total);
    const stats = await context.receiver.call<ReceiverStats>('stats');
    const neighbourStats = await context.receiver.call<NeighbourStats>('neighbourStats');
    const stored = await deliveriesByUser(database, neighbourId);

    const sameOrigin = (userId: number) => userId % origins === neighbourId % origins;
    const buckets: number[] = [];
    for (const [, , at] of arrivals) {
      const bucket = Math.max(0, Math.floor((at - load.startedAt) / 5000));
      while (buckets.length <= bucket) buckets.push(0);
      buckets[bucket]++;
    }
    const lost = Math.max(0, warm.published + load.published - stored.others.rows);
    const neighbourLost = neighbour ? Math.max(0, neighbour.queued - stored.neighbour.rows) : 0;
    if (lost > 0) context.failures.push(`isolation (${kind}): ${lost} healthy events acknowledged without a delivery row`);
    if (neighbour && neighbourLost > 0)
      context.failures.push(`isolation (${kind}): ${neighbourLost} of the neighbour's ${neighbour.queued} events without a delivery row`);
    if (neighbour && neighbour.queued !== neighbour.events)
      context.failures.push(
        `isolation (${kind}): ${neighbour.events} neighbour events published but ${neighbour.queued} deliveries queued`,
      );
    if (kind === 'hanging' && (stored.neighbour.byStatus.DELIVERED ?? 0) > 0)
      context.failures.push(
        `isolation (hanging): ${stored.neighbour.byStatus.DELIVERED} deliveries to an endpoint that never answers are DELIVERED`,
      );
    const badSignatures = stats.badSignatures + neighbourStats.badSignatures;
    if (badSignatures > 0) context.failures.push(`isolation (${kind}): ${badSignatures} bad signature(s)`);
    return {
      kind,
      neighbour,
      healthy: {
        users,
        seconds,
        published: load.published,
        publishFailures: load.failedCalls,
        publishUnanswered: load.unansweredCalls,
        achievedRate: load.achievedRate,
        delivered: arrivals.length,
        undelivered: load.published - arrivals.length,
        lost,
        badSignatures: stats.badSignatures,
        duplicates: stats.duplicates,
        publishToArrivalMs: latencies(arrivals.map(([ms]) => ms)),
        sameOriginAsNeighbourMs: latencies(arrivals.filter(([, userId]) => sameOrigin(userId)).map(([ms]) => ms)),
        otherOriginsMs: latencies(arrivals.filter(([, userId]) => !sameOrigin(userId)).map(([ms]) => ms)),
        publishToCommitMs: latencies(load.committedMs),
        firstArrivalAfterLoadStartMs: arrivals.length > 0 ? round(Math.min(...arrivals.map(([, , at]) => at)) - load.startedAt) : null,
        arrivalsPer5s: buckets,
        waitedAfterLoadMs: load.waitedMs,
        stored: stored.others,
      },
      neighbourOutcome: neighbour
        ? {
            receiver: neighbourStats,
            stored: stored.neighbour,
            lost: neighbourLost,
            attemptsNotReachingEndpoint: Math.max(0, stored.neighbour.attempts - neighbourStats.requests),
          }
        : null,
    };
  } finally {
    await context.receiver.call('setNeighbours', []);
    await service.stop();
    await database.drop();
  }
}

function neighbourEvent(userId: number, seq: number): BenchEvent {
  return { ...benchEvent(seq, 1), userId, type: typeOfUser(userId), title: `Neighbour event #${seq}` };
}

/** Publishes one event by `path`: the deliveries it queued, and how long until the call answered (see `publishToCommitMs`). */
type PublishOne = (event: BenchEvent) => Promise<{ queued: number; committedMs: number }>;

function publishOneVia(path: PublishPath, service: { ipc: IpcChild; base: string }): PublishOne {
  if (path === 'publisher') return (event) => service.ipc.call<{ queued: number; committedMs: number }>('publish', [event]);
  return async (event) => {
    const startedAt = wallMs();
    const { queuedDeliveries } = await postBatch(service.base, [event]);
    return { queued: queuedDeliveries, committedMs: round(wallMs() - startedAt, 2) };
  };
}

/**
 * Publishes events `from`… (user 1 + seq mod users: each user one event per second when the rate is `users`/s)
 * one call each on a fixed schedule, not waiting for earlier calls; then waits until they arrived, at most
 * `waitMs` after the last call. Counts only the calls acknowledged by then.
 */
async function publishSteadily(receiver: IpcChild, publishOne: PublishOne, users: number, from: number, count: number, waitMs: number) {
  const intervalMs = 1000 / users;
  const committedMs: number[] = [];
  let published = 0;
  let failedCalls = 0;
  let pendingCalls = count;
  const startedAt = wallMs();
  for (let i = 0; i < count; i++) {
    const wait = startedAt + i * intervalMs - wallMs();
    if (wait > 1) await sleep(wait);
    publishOne(benchEvent(from + i, users)).then(
      (result) => {
        published += result.queued;
        committedMs.push(result.committedMs);
        pendingCalls--;
      },
      () => {
        failedCalls++;
        pendingCalls--;
      },
    );
  }
  const endedAt = wallMs();
  const achievedRate = round((count * 1000) / (endedAt - startedAt));
  const deadline = endedAt + waitMs;
  await waitForArrivals(receiver, { from, count, published: () => published, unanswered: () => pendingCalls }, deadline);
  return {
    startedAt,
    published,
    failedCalls,
    unansweredCalls: pendingCalls,
    committedMs,
    achievedRate,
    waitedMs: round(wallMs() - endedAt),
  };
}

function latencies(values: readonly number[]): Latencies | null {
  return values.length === 0 ? null : { count: values.length, ...percentiles(values) };
}
