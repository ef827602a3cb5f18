import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sleep, wallMs } from '../lib/clock';
import { cpuSnapshot, cpuUsage, databaseServerPids } from '../lib/cpu';
import { summarizeProfile, type ProfileSummary } from '../lib/profile-summary';
import type { ReceiverStats } from '../lib/receiver-types';
import { deliveryStates } from '../lib/delivery-states';
import { type BenchContext, checkDelivery, type DeliveryCheck, round } from '../lib/context';
import type { BenchDatabase } from '../lib/databases';
import { IpcChild } from '../lib/ipc';
import type { WakeFloorInput } from '../lib/wake-floor-process';
import type { PauseReport } from '../lib/service-types';
import { startIpcService } from '../lib/services';
import { atSteadyRate } from '../lib/steady-rate';
import { benchEvent, enableWebhooks, waitForEvents } from '../lib/workload';

/** Seconds at the same rate before the measured window: the service has just booted (cold JIT, empty connection pool). */
const WARMUP_SECONDS = 3;
/** The rate a lone event's CPU is compared with (issue 24: within 2 × of its CPU per event), after the window. */
const HIGH_RATE = 2000;

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
  /** Where a lone event's cost goes (issue 24): CPU, statements and TLS handshakes per event over the window, and at idle. */
  readonly perEvent?: Record<string, unknown>;
  /** The same service right after, at {@link HIGH_RATE} events/s: its CPU per event, to compare a lone event's with. */
  readonly highRate?: HighRateCost;
  /** The same two rates without the service: what waking alone, and one bare round trip, cost per event here. */
  readonly wakeFloor?: WakeFloor;
  readonly profile?: ProfileSummary;
}

/** CPU per event (ms) of a bare loop at the lone rate and at {@link HIGH_RATE}, and their ratio. */
export interface FloorRatio {
  readonly loneMs: number;
  readonly highRateMs: number;
  readonly ratio: number;
}

export interface WakeFloor {
  readonly wakeOnly: FloorRatio;
  /** One mysql2 `SELECT 1` per event (MySQL/MariaDB runs only). */
  readonly oneRoundTrip?: FloorRatio;
}

export interface HighRateCost {
  readonly rate: number;
  readonly seconds: number;
  readonly achievedRate: number;
  readonly serviceCpuMsPerEvent: number;
  readonly publishToReceiverMs: Percentiles;
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
    const profileFile = join(context.profileDir, `${name}-${rate}.cpuprofile`);
    if (context.size.latencyProfile) await service.ipc.call('startProfile');
    const pids = { service: [service.ipc.process.pid!], receiver: [context.receiver.process.pid!], database: databaseServerPids() };
    const procBefore = cpuSnapshot(pids);
    await service.ipc.call('queryCounts', true);
    const cpuBefore = await service.ipc.call<NodeJS.CpuUsage>('cpuUsage');
    const startedAt = wallMs();
    // For an outside profiler (perf, strace): the service's pid, written as the measured window starts.
    if (process.env.BENCH_WINDOW_MARKER) writeFileSync(process.env.BENCH_WINDOW_MARKER, `${service.ipc.process.pid}\n`);
    const started = alongside?.start(service.base);
    // The service's CPU per 5 s of the window (ms of CPU per event published in it): is it still warming up?
    const series: number[] = [];
    let last = cpuBefore;
    const seriesTimer = setInterval(() => {
      void service.ipc.call<NodeJS.CpuUsage>('cpuUsage').then((now) => {
        series.push(round((now.user - last.user + now.system - last.system) / 1000 / (rate * 5), 3));
        last = now;
      });
    }, 5000);
    const committed = await publishSteadily(service.ipc, rate, users, warmupEvents, total);
    clearInterval(seriesTimer);
    const achievedRate = (total * 1000) / (wallMs() - startedAt);
    await started;
    const stats = await waitForEvents(context.receiver, total + extra, () => deliveryStates(database));
    const cpuAfter = await service.ipc.call<NodeJS.CpuUsage>('cpuUsage');
    const windowMs = wallMs() - startedAt;
    const queries = await service.ipc.call<Record<string, number>>('queryCounts', true);
    const procUsage = cpuUsage(procBefore, cpuSnapshot(pids));
    if (context.size.latencyProfile) await service.ipc.call('stopProfile', profileFile);
    const servicePauses = await service.ipc.call<PauseReport>('stopPauseWatch');
    // Idle: no events, the same process; what it spends on its own (timers, polls) per second.
    const idleSeconds = context.size.latencyIdleSeconds ?? 0;
    const idleBefore = await service.ipc.call<NodeJS.CpuUsage>('cpuUsage');
    const idleStartedAt = wallMs();
    if (idleSeconds > 0) await sleep(idleSeconds * 1000);
    const idleAfter = await service.ipc.call<NodeJS.CpuUsage>('cpuUsage');
    const idleMs = wallMs() - idleStartedAt;
    const idleQueries = await service.ipc.call<Record<string, number>>('queryCounts', true);
    const cpuMs = (a: NodeJS.CpuUsage, b: NodeJS.CpuUsage) => (b.user - a.user + b.system - a.system) / 1000;
    const sum = (counts: Record<string, number>) => Object.values(counts).reduce((x, y) => x + y, 0);
    const rstats = stats as ReceiverStats;
    const windowCpuMs = cpuMs(cpuBefore, cpuAfter);
    const perEvent = {
      events: total,
      windowMs: round(windowMs),
      serviceCpuMs: round(windowCpuMs),
      serviceCores: round(windowCpuMs / windowMs, 3),
      serviceCpuMsPerEvent: round(windowCpuMs / total, 3),
      cpuMsPerEventEvery5s: series,
      serviceUserSystemMs: {
        user: round((cpuAfter.user - cpuBefore.user) / 1000),
        system: round((cpuAfter.system - cpuBefore.system) / 1000),
      },
      processes: procUsage,
      statementsPerEvent: round(sum(queries) / total, 3),
      statements: queries,
      receiver: {
        requests: rstats.requests,
        connections: rstats.connections,
        tlsHandshakes: rstats.tlsHandshakes,
        tlsResumed: rstats.tlsResumed,
        handshakesPerEvent: round((rstats.tlsHandshakes ?? 0) / total, 4),
      },
      idle: {
        seconds: round(idleMs / 1000, 2),
        serviceCores: round(cpuMs(idleBefore, idleAfter) / idleMs, 4),
        serviceCpuMsPerSecond: round(cpuMs(idleBefore, idleAfter) / (idleMs / 1000), 2),
        statementsPerSecond: round(sum(idleQueries) / (idleMs / 1000), 2),
        statements: idleQueries,
      },
    };
    const check = checkDelivery(context, name, stats, total + extra);
    const publishToReceiverMs = percentiles(await context.receiver.call<number[]>('latencies'));
    const highRate = alongside ? undefined : await highRateCost(context, service.ipc, database, warmupEvents + total);
    const wakeFloor = alongside ? undefined : await measureWakeFloor(rate, database.url);
    return {
      ...check,
      targetRate: rate,
      achievedRate: round(achievedRate),
      seconds,
      publishToReceiverMs,
      publishToCommitMs: percentiles(committed),
      servicePauses,
      warmup: { seconds: WARMUP_SECONDS, publishToReceiverMs: percentiles(warmupLatencies) },
      perEvent,
      ...(highRate ? { highRate } : {}),
      ...(wakeFloor ? { wakeFloor } : {}),
      ...(context.size.latencyProfile ? { profile: summarizeProfile(profileFile, 40) } : {}),
    };
  } finally {
    await service.stop();
    await database.drop();
  }
}

/** {@link HIGH_RATE} events/s for a third of the window (at least 5 s) on the same service: its CPU per event there. */
async function highRateCost(context: BenchContext, service: IpcChild, database: BenchDatabase, from: number): Promise<HighRateCost> {
  const seconds = Math.max(5, Math.round(context.size.latencySeconds / 3));
  const total = HIGH_RATE * seconds;
  await context.receiver.call('reset');
  const cpuBefore = await service.call<NodeJS.CpuUsage>('cpuUsage');
  const startedAt = wallMs();
  await publishSteadily(service, HIGH_RATE, context.size.users, from, total);
  const achievedRate = (total * 1000) / (wallMs() - startedAt);
  const stats = await waitForEvents(context.receiver, total, () => deliveryStates(database));
  const cpuAfter = await service.call<NodeJS.CpuUsage>('cpuUsage');
  checkDelivery(context, 'latency-high-rate', stats, total);
  const cpuMs = (cpuAfter.user - cpuBefore.user + cpuAfter.system - cpuBefore.system) / 1000;
  return {
    rate: HIGH_RATE,
    seconds,
    achievedRate: round(achievedRate),
    serviceCpuMsPerEvent: round(cpuMs / total, 3),
    publishToReceiverMs: percentiles(await context.receiver.call<number[]>('latencies')),
  };
}

/** {@link WakeFloor}: a bare loop in its own process, 5 s at the lone rate and 3 s at {@link HIGH_RATE}, without and with a round trip. */
async function measureWakeFloor(rate: number, url: string | undefined): Promise<WakeFloor> {
  const child = IpcChild.fork(join(__dirname, '../lib/wake-floor-process.js'), 'wake-floor');
  try {
    await child.ready;
    const cost = async (roundTrips: number): Promise<FloorRatio> => {
      const at = (input: WakeFloorInput) => child.call<{ cpuMsPerEvent: number }>('run', input).then((result) => result.cpuMsPerEvent);
      const loneMs = await at({ rate, seconds: 5, roundTrips, url });
      const highRateMs = await at({ rate: HIGH_RATE, seconds: 3, roundTrips, url });
      return { loneMs, highRateMs, ratio: round(loneMs / highRateMs, 2) };
    };
    const wakeOnly = await cost(0);
    return url ? { wakeOnly, oneRoundTrip: await cost(1) } : { wakeOnly };
  } finally {
    await child.stop();
  }
}

/** Publishes events `from`… one at a time on a fixed schedule (not waiting for earlier calls); resolves with each call's publish-to-commit time. */
async function publishSteadily(service: IpcChild, rate: number, users: number, from: number, count: number): Promise<number[]> {
  const calls = await atSteadyRate(rate, count, (i) => service.call<{ committedMs: number }>('publish', [benchEvent(from + i, users)]));
  return calls.map((call) => call.committedMs);
}

export function percentiles(values: readonly number[]): Percentiles {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (p: number) => round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]);
  const mean = sorted.reduce((sum, value) => sum + value, 0) / sorted.length;
  return { p50: at(50), p95: at(95), p99: at(99), max: round(sorted[sorted.length - 1]), mean: round(mean) };
}
