import { wallMs } from '../lib/clock';
import { type BenchContext, checkDelivery, type DeliveryCheck, round } from '../lib/context';
import { deliveryStates } from '../lib/delivery-states';
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
}

export interface SpreadLatencyResult {
  readonly instances: number;
  readonly targetRate: number;
  readonly seconds: number;
  /** Each instance with `DELIVERY_WAKE_URL`: the publishing instance wakes the owner. */
  readonly wakeUps: SpreadLatencyRun;
  /** Without it: the owner finds what others published at its next look for due work (every second). */
  readonly pollOnly: SpreadLatencyRun;
}

/**
 * Publish-to-first-attempt with three `node dist/service/main.js` behind a load balancer: one event every 1/rate s, each through
 * the next instance's internal endpoint in turn. Two in three land on an instance that does not own the user's
 * partition: with wake-ups, that instance wakes the owner; without, the delivery waits, due, until the owner's next look
 * for due work (every second). Both, one after the other, each on a fresh database.
 */
export async function spreadLatency(context: BenchContext): Promise<SpreadLatencyResult> {
  const { latencyRate, latencySeconds } = context.size;
  const wakeUps = await spreadRun(context, true);
  const pollOnly = await spreadRun(context, false);
  return { instances: INSTANCES, targetRate: latencyRate, seconds: latencySeconds, wakeUps, pollOnly };
}

async function spreadRun(context: BenchContext, wakeable: boolean): Promise<SpreadLatencyRun> {
  const { latencyRate: rate, latencySeconds: seconds, users } = context.size;
  const label = wakeable ? 'spread-latency-woken' : 'spread-latency-polled';
  const database = await context.server.create(wakeable ? 'spread_latency_woken' : 'spread_latency_polled');
  const instances: MainProcess[] = [];
  try {
    for (let i = 0; i < INSTANCES; i++)
      instances.push(
        await startMainProcess({ database: database.env, caFile: context.caFile, wakeable }, context.logDir, `${label}-${i + 1}`),
      );
    await context.receiver.call('setSecrets', await enableWebhooks(instances[0].base, users, context.bases));
    await context.receiver.call('reset'); // what earlier scenarios sent must not count as this warm-up's arrivals
    const bases = instances.map((instance) => instance.base);
    const warmup = rate * WARMUP_SECONDS;
    await publishSteadily(bases, rate, users, 0, warmup);
    await waitForEvents(context.receiver, warmup, () => deliveryStates(database));
    await context.receiver.call('reset');
    const total = rate * seconds;
    const startedAt = wallMs();
    await publishSteadily(bases, rate, users, warmup, total);
    const achievedRate = (total * 1000) / (wallMs() - startedAt);
    const stats = await waitForEvents(context.receiver, total, () => deliveryStates(database));
    const latencies = await context.receiver.call<number[]>('latencies');
    return {
      ...checkDelivery(context, label, stats, total),
      achievedRate: round(achievedRate),
      publishToReceiverMs: percentiles(latencies),
      over100MsShare: round(latencies.filter((ms) => ms > 100).length / latencies.length, 3),
    };
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await database.drop();
  }
}

/** Events `from`… one at a time on a fixed schedule, each to the next instance in turn. */
function publishSteadily(bases: readonly string[], rate: number, users: number, from: number, count: number): Promise<unknown> {
  return atSteadyRate(rate, count, (i) => postBatch(bases[i % bases.length], [benchEvent(from + i, users)]));
}
