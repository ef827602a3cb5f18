import type { DnsFloodSize } from '../scenarios/dns-flood';
import type { DatabaseServer } from './databases';
import type { IpcChild } from './ipc';
import type { DeliveryStates } from './delivery-states';
import type { ReceiverStats } from './receiver-types';

export interface BenchSize {
  readonly users: number;
  readonly events: number;
  readonly batchSize: number;
  readonly concurrency: number;
  readonly latencyRate: number;
  readonly latencySeconds: number;
  /** Latency scenario: take a CPU profile of the service over the measured window. */
  readonly latencyProfile?: boolean;
  /** Latency scenario: seconds without events after the window, to measure the service's idle CPU and queries. */
  readonly latencyIdleSeconds?: number;
  readonly backlog: number;
  readonly scaleOut: readonly number[];
  readonly isolation: IsolationSize;
  readonly endpointLimits: EndpointLimitsSize;
  readonly dnsFlood: DnsFloodSize;
  /** Rounds of the peers scenario (each: ours, pg-boss, the floor, BullMQ, ours through HTTP); targets take the median. */
  readonly peerRounds: number;
}

/** Sizes of the endpoint-limits scenario. */
export interface EndpointLimitsSize {
  /** Events published at once for the slow endpoint's user. */
  readonly slowEvents: number;
  /** How long the dead endpoint's user gets a steady trickle of events. */
  readonly deadSeconds: number;
  /** Events per second of that trickle, over all instances. */
  readonly deadRate: number;
}

/** Sizes of the isolation scenario (issue 11). */
export interface IsolationSize {
  /** Healthy users; each gets one event per second. */
  readonly users: number;
  /** Length of the healthy load. */
  readonly seconds: number;
  /** Events queued for the neighbour just before the healthy load. */
  readonly neighbourEvents: number;
  /** After the load, how long stragglers may take before they count as undelivered. */
  readonly stragglerWaitSeconds: number;
}

export interface BenchContext {
  readonly size: BenchSize;
  readonly server: DatabaseServer;
  readonly receiver: IpcChild;
  readonly bases: string[];
  readonly caPem: string;
  readonly caFile: string;
  readonly logDir: string;
  readonly profileDir: string;
  /** Reasons the run fails (bad signature, lost event). */
  readonly failures: string[];
}

export interface DeliveryCheck {
  readonly expected: number;
  readonly delivered: number;
  readonly lost: number;
  readonly duplicates: number;
  readonly badSignatures: number;
  /** Deliveries whose attempt failed (e.g. the 5 s deadline under load) and wait for their retry: slow, not lost. */
  readonly rescheduledAfterFailure?: { count: number; lastErrors: Record<string, number> };
}

/** Records a failure for any bad signature or lost event; returns the figures for the report. */
export function checkDelivery(
  context: BenchContext,
  scenario: string,
  stats: ReceiverStats & { rescheduled?: DeliveryStates },
  expected: number,
): DeliveryCheck {
  const rescheduled = stats.rescheduled?.rescheduled ?? 0;
  const lost = Math.max(0, expected - stats.uniqueEvents - rescheduled);
  if (stats.badSignatures > 0)
    context.failures.push(`${scenario}: ${stats.badSignatures} bad signature(s), e.g. ${stats.badSignatureSamples.join('; ')}`);
  if (lost > 0) context.failures.push(`${scenario}: ${lost} of ${expected} events lost`);
  if (stats.uniqueEvents > expected) context.failures.push(`${scenario}: ${stats.uniqueEvents - expected} unexpected event ids`);
  const check: DeliveryCheck = {
    expected,
    delivered: stats.uniqueEvents,
    lost,
    duplicates: stats.duplicates,
    badSignatures: stats.badSignatures,
  };
  return stats.rescheduled
    ? { ...check, rescheduledAfterFailure: { count: rescheduled, lastErrors: stats.rescheduled.lastErrors } }
    : check;
}

export const round = (value: number, digits = 1) => Math.round(value * 10 ** digits) / 10 ** digits;
