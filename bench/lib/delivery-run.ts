// One measured delivery run, whoever delivers (our engine through publishMany or the internal endpoint, or a peer):
// from the first publish call to the last 2xx at the receiver, with the CPU each process group used per event.
import { wallMs } from './clock';
import { type BenchContext, checkDelivery, type DeliveryCheck, round } from './context';
import { cpuMs, cpuSnapshot, type CpuUsage, cpuUsage } from './cpu';
import type { DeliveryStates } from './delivery-states';
import { waitForEvents } from './workload';

export interface DeliveryRunResult extends DeliveryCheck {
  /** Time to get every publish call accepted (committed). */
  readonly publishMs: number;
  /** First publish call to the last 2xx at the receiver. */
  readonly durationMs: number;
  readonly deliveriesPerSecond: number;
  /** From the first publish call to the last delivery: how busy the machine was, the cores of each process group. */
  readonly cpu: CpuUsage;
  /** CPU time per delivered event of each process group (ms), over the same window. */
  readonly cpuMsPerEvent: Record<string, number>;
  /** The store's server counters (statements, commits, log syncs…) per delivered event, when the run reads them. */
  readonly storePerEvent?: Record<string, number>;
}

export interface DeliveryRun {
  /** Names the run in failures (lost events, bad signatures). */
  readonly label: string;
  readonly expected: number;
  /** The pids of each process group, read again at each snapshot (PostgreSQL starts a process per connection). */
  readonly pids: () => Record<string, readonly number[]>;
  /** Publishes every event; resolves with the deliveries queued. */
  readonly publish: () => Promise<number>;
  /** What the store says when the receiver stops getting events (rescheduled, not lost). */
  readonly diagnose?: () => Promise<DeliveryStates>;
  /** The store's server-wide counters, read before the first publish and after `settle`. */
  readonly counters?: () => Promise<Record<string, number>>;
  /** After the last delivery (and the CPU snapshot): e.g. until a peer's store has marked every job done. */
  readonly settle?: () => Promise<void>;
}

/** Runs `run.publish`, waits for its events at the receiver (which the caller has reset) and measures. */
export async function measureDeliveryRun(context: BenchContext, run: DeliveryRun): Promise<DeliveryRunResult> {
  const countersBefore = await run.counters?.();
  const cpuBefore = cpuSnapshot(run.pids());
  const startedAt = wallMs();
  const queued = await run.publish();
  const publishMs = wallMs() - startedAt;
  const stats = await waitForEvents(context.receiver, queued, run.diagnose);
  const cpuAfter = cpuSnapshot(run.pids());
  await run.settle?.();
  const countersAfter = await run.counters?.();
  const check = checkDelivery(context, run.label, stats, run.expected);
  const per = (value: number) => round(value / Math.max(1, check.delivered), 3);
  const perEvent = Object.entries(cpuMs(cpuBefore, cpuAfter)).map(([name, ms]) => [name, per(ms)]);
  const durationMs = stats.lastOkAt - startedAt;
  return {
    ...check,
    publishMs: round(publishMs),
    durationMs: round(durationMs),
    deliveriesPerSecond: round((check.delivered * 1000) / durationMs),
    cpu: cpuUsage(cpuBefore, cpuAfter),
    cpuMsPerEvent: Object.fromEntries(perEvent),
    ...(countersBefore && countersAfter
      ? {
          storePerEvent: Object.fromEntries(
            Object.keys(countersAfter).map((name) => [name, per(countersAfter[name] - countersBefore[name])]),
          ),
        }
      : {}),
  };
}
