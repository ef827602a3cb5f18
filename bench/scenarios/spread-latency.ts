import { wallMs } from '../lib/clock';
import { type BenchContext, checkDelivery, type DeliveryCheck, round } from '../lib/context';
import { deliveryStates } from '../lib/delivery-states';
import { partitionsSettled } from '../lib/partitions-settled';
import { type MainProcess, startMainProcess } from '../lib/services';
import { atSteadyRate } from '../lib/steady-rate';
import { benchEvent, enableWebhooks, postBatch, waitForEvents } from '../lib/workload';
import { type Percentiles, percentiles } from './latency';

const INSTANCES = 3;
const WARMUP_SECONDS = 3;

export interface SpreadLatencyRun extends DeliveryCheck {
  readonly achievedRate: number;
  /** Publish call (on any instance) to the first attempt's arrival at the receiver. */
  readonly publishToReceiverMs: Percentiles;
  /** Share of the events that took over 100 ms: those that waited for the owner's next look for due work. */
  readonly over100MsShare: number;
  /** The publish calls themselves (the internal endpoint's answer, after the commit): a slow one is not the owner's wait. */
  readonly publishCallMs: Percentiles;
}

/** Events spaced far apart (each one alone in the outbox) and a steady load, each with and without wake-ups. */
export interface SpreadLatencyResult {
  readonly instances: number;
  /** One event every {@link LONE_INTERVAL_MS}: what a lone publish on an instance that does not own the user waits. */
  readonly lone: SpreadLatencyPair;
  /** The latency scenario's rate (`--latency-rate`): the owners drain all the time, woken or not. */
  readonly loaded: SpreadLatencyPair;
}

export interface SpreadLatencyPair {
  readonly rate: number;
  readonly seconds: number;
  /** Each instance with `DELIVERY_WAKE_URL`: the publishing instance wakes the owner. */
  readonly wakeUps: SpreadLatencyRun;
  /** Without it: the owner finds what others published at its next look for due work (every second). */
  readonly pollOnly: SpreadLatencyRun;
}

/** Lone events: one every 200 ms for 20 s (100 events), far enough apart that an owner is idle when each comes. */
const LONE_INTERVAL_MS = 200;
const LONE_SECONDS = 20;

/**
 * Publish-to-first-attempt with three `node dist/service/main.js` behind a load balancer: events one at a time on a fixed
 * schedule, each through the next instance's internal endpoint in turn. Two in three land on an instance that does not
 * own the user's partition: with wake-ups, that instance wakes the owner; without, the delivery waits, due, until the
 * owner's next look for due work (every second), unless the owner drains anyway (under load it always does). Lone events
 * first, then the load, each with and without wake-ups, each run on a fresh database.
 */
export async function spreadLatency(context: BenchContext): Promise<SpreadLatencyResult> {
  const { latencyRate, latencySeconds } = context.size;
  const pair = async (rate: number, seconds: number): Promise<SpreadLatencyPair> => ({
    rate,
    seconds,
    wakeUps: await spreadRun(context, true, rate, seconds),
    pollOnly: await spreadRun(context, false, rate, seconds),
  });
  const lone = await pair(1000 / LONE_INTERVAL_MS, LONE_SECONDS);
  const loaded = await pair(latencyRate, latencySeconds);
  return { instances: INSTANCES, lone, loaded };
}

async function spreadRun(context: BenchContext, wakeable: boolean, rate: number, seconds: number): Promise<SpreadLatencyRun> {
  const { users } = context.size;
  const label = `spread-latency-${rate}-${wakeable ? 'woken' : 'polled'}`;
  const database = await context.server.create(`spread_latency_${rate}_${wakeable ? 'woken' : 'polled'}`);
  const instances: MainProcess[] = [];
  try {
    for (let i = 0; i < INSTANCES; i++)
      instances.push(
        await startMainProcess({ database: database.env, caFile: context.caFile, wakeable }, context.logDir, `${label}-${i + 1}`),
      );
    await context.receiver.call('setSecrets', await enableWebhooks(instances[0].base, users, context.bases));
    await context.receiver.call('reset'); // what earlier scenarios sent must not count as this warm-up's arrivals
    const bases = instances.map((instance) => instance.base);
    await partitionsSettled(bases);
    const warmup = Math.ceil(rate * WARMUP_SECONDS);
    await publishSteadily(bases, rate, users, 0, warmup);
    await waitForEvents(context.receiver, warmup, () => deliveryStates(database));
    await context.receiver.call('reset');
    const total = rate * seconds;
    const startedAt = wallMs();
    const publishCalls = await publishSteadily(bases, rate, users, warmup, total);
    const achievedRate = (total * 1000) / (wallMs() - startedAt);
    const stats = await waitForEvents(context.receiver, total, () => deliveryStates(database));
    const latencies = await context.receiver.call<number[]>('latencies');
    return {
      ...checkDelivery(context, label, stats, total),
      achievedRate: round(achievedRate),
      publishToReceiverMs: percentiles(latencies),
      over100MsShare: round(latencies.filter((ms) => ms > 100).length / latencies.length, 3),
      publishCallMs: percentiles(publishCalls),
    };
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await database.drop();
  }
}

/** Events `from`… one at a time on a fixed schedule, each to the next instance in turn; how long each call took (ms). */
function publishSteadily(bases: readonly string[], rate: number, users: number, from: number, count: number): Promise<number[]> {
  return atSteadyRate(rate, count, async (i) => {
    const calledAt = wallMs();
    await postBatch(bases[i % bases.length], [benchEvent(from + i, users)]);
    return wallMs() - calledAt;
  });
}
