import { sleep, wallMs } from '../lib/clock';
import { deliveryStates } from '../lib/delivery-states';
import { type BenchContext, checkDelivery, type DeliveryCheck, round } from '../lib/context';
import type { PauseReport } from '../lib/service-types';
import { startIpcService } from '../lib/services';
import { benchEvent, enableWebhooks, waitForEvents } from '../lib/workload';

export interface LatencyResult extends DeliveryCheck {
  readonly targetRate: number;
  readonly achievedRate: number;
  readonly seconds: number;
  readonly publishToReceiverMs: { p50: number; p95: number; p99: number; max: number; mean: number };
  /** From the publish call to its outbox rows committed (inside the service). */
  readonly publishToCommitMs: { p50: number; p99: number; max: number };
  /** The service's event-loop delay and GC pauses over the window. */
  readonly servicePauses: PauseReport;
}

/** Scenario 3: one event every 1/rate s through the publisher; publish call to arrival at the receiver. */
export async function latency(context: BenchContext): Promise<LatencyResult> {
  const { latencyRate: rate, latencySeconds: seconds, users } = context.size;
  const database = await context.server.create('latency');
  const service = await startIpcService({ database: database.env, caFile: context.caFile }, context.logDir, 'latency');
  try {
    await context.receiver.call('setSecrets', await enableWebhooks(service.base, users, context.bases));
    await context.receiver.call('reset');
    const total = rate * seconds;
    const intervalMs = 1000 / rate;
    const calls: Promise<{ committedMs: number }>[] = [];
    await service.ipc.call('startPauseWatch');
    const startedAt = wallMs();
    for (let seq = 0; seq < total; seq++) {
      const wait = startedAt + seq * intervalMs - wallMs();
      if (wait > 1) await sleep(wait);
      calls.push(service.ipc.call('publish', [benchEvent(seq, users)]));
    }
    const committed = (await Promise.all(calls)).map((call) => call.committedMs).sort((a, b) => a - b);
    const achievedRate = (total * 1000) / (wallMs() - startedAt);
    const stats = await waitForEvents(context.receiver, total, () => deliveryStates(database));
    const servicePauses = await service.ipc.call<PauseReport>('stopPauseWatch');
    const check = checkDelivery(context, 'latency', stats, total);
    const latencies = (await context.receiver.call<number[]>('latencies')).sort((a, b) => a - b);
    const at = (p: number) => round(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]);
    const mean = latencies.reduce((sum, value) => sum + value, 0) / latencies.length;
    return {
      ...check,
      targetRate: rate,
      achievedRate: round(achievedRate),
      seconds,
      publishToReceiverMs: { p50: at(50), p95: at(95), p99: at(99), max: round(latencies[latencies.length - 1]), mean: round(mean) },
      publishToCommitMs: { p50: round(committed[Math.floor(committed.length / 2)]), p99: round(committed[Math.floor(committed.length * 0.99)]), max: round(committed[committed.length - 1]) },
      servicePauses,
    };
  } finally {
    await service.stop();
    await database.drop();
  }
}
