import { sleep, wallMs } from '../lib/clock';
import { deliveryStates } from '../lib/delivery-states';
import { type BenchContext, checkDelivery, type DeliveryCheck, round } from '../lib/context';
import type { BenchDatabase } from '../lib/databases';
import type { IpcChild } from '../lib/ipc';
import type { PauseReport } from '../lib/service-types';
import { startIpcService } from '../lib/services';
import { benchEvent, enableWebhooks, waitForEvents } from '../lib/workload';

/** Seconds at the same rate before the measured window: the service has just booted (cold JIT, empty connection pool). */
const WARMUP_SECONDS = 3;

export interface Percentiles {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

export interface LatencyResult extends DeliveryCheck {
  readonly targetRate: number;
  readonly achievedRate: number;
  readonly seconds: number;
  readonly publishToReceiverMs: Percentiles;
  /** From the publish call to its outbox rows committed (inside the service). */
  readonly publishToCommitMs: Percentiles;
  /** The service's event-loop delay and GC pauses over the window. */
  readonly servicePauses: PauseReport;
  /** The warm-up before the window, at the same rate; not part of the figures above. */
  readonly warmup: { readonly seconds: number; readonly publishToReceiverMs: Percentiles };
}

/** Work run alongside the measured window (the recovery scenario): prepared after the warm-up, started with the window. */
export interface AlongsideLoad {
  readonly name: string;
  /** Returns how many extra events (not measured for latency) will reach the receiver. */
  prepare(database: BenchDatabase, serviceBase: string): Promise<number>;
  start(serviceBase: string): Promise<unknown>;
}

/**
 * Scenario 3: one event every 1/rate s through the publisher; publish call to arrival at the receiver,
 * over `latencySeconds` after a warm-up of {@link WARMUP_SECONDS} at the same rate.
 */
export async function latency(context: BenchContext, alongside?: AlongsideLoad): Promise<LatencyResult> {
  const { latencyRate: rate, latencySeconds: seconds, users } = context.size;
  const name = alongside ? `latency-${alongside.name}` : 'latency';
  const database = await context.server.create(name);
  const service = await startIpcService({ database: database.env, caFile: context.caFile }, context.logDir, name);
  try {
    await context.receiver.call('setSecrets', await enableWebhooks(service.base, users, context.bases));
    await context.receiver.call('reset');
    const warmupEvents = rate * WARMUP_SECONDS;
    await publishSteadily(service.ipc, rate, users, 0, warmupEvents);
    await waitForEvents(context.receiver, warmupEvents, () => deliveryStates(database));
    const warmupLatencies = await context.receiver.call<number[]>('latencies');

    const extra = alongside ? await alongside.prepare(database, service.base) : 0;
    await context.receiver.call('reset');
    const total = rate * seconds;
    await service.ipc.call('startPauseWatch');
    const startedAt = wallMs();
    const started = alongside?.start(service.base);
    const committed = await publishSteadily(service.ipc, rate, users, warmupEvents, total);
    const achievedRate = (total * 1000) / (wallMs() - startedAt);
    await started;
    const stats = await waitForEvents(context.receiver, total + extra, () => deliveryStates(database));
    const servicePauses = await service.ipc.call<PauseReport>('stopPauseWatch');
    const check = checkDelivery(context, name, stats, total + extra);
    return {
      ...check,
      targetRate: rate,
      achievedRate: round(achievedRate),
      seconds,
      publishToReceiverMs: percentiles(await context.receiver.call<number[]>('latencies')),
      publishToCommitMs: percentiles(committed),
      servicePauses,
      warmup: { seconds: WARMUP_SECONDS, publishToReceiverMs: percentiles(warmupLatencies) },
    };
  } finally {
    await service.stop();
    await database.drop();
  }
}

/** Publishes events `from`… one at a time on a fixed schedule (not waiting for earlier calls); resolves with each call's publish-to-commit time. */
async function publishSteadily(service: IpcChild, rate: number, users: number, from: number, count: number): Promise<number[]> {
  const intervalMs = 1000 / rate;
  const calls: Promise<{ committedMs: number }>[] = [];
  const startedAt = wallMs();
  for (let i = 0; i < count; i++) {
    const wait = startedAt + i * intervalMs - wallMs();
    if (wait > 1) await sleep(wait);
    calls.push(service.call('publish', [benchEvent(from + i, users)]));
  }
  return (await Promise.all(calls)).map((call) => call.committedMs);
}

export function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { p50: at(50), p95: at(95), p99: at(99), max: round(sorted[sorted.length - 1]), mean: round(mean) };
}
