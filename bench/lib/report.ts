import type { BacklogResult } from '../scenarios/backlog';
import type { CeilingResult } from '../scenarios/ceiling';
import type { DnsFloodResult } from '../scenarios/dns-flood';
import type { EndpointLimitsResult } from '../scenarios/endpoint-limits';
import type { IsolationResult } from '../scenarios/isolation';
import type { LatencyResult } from '../scenarios/latency';
import type { PeersResult } from '../scenarios/peers';
import type { RecoveryResult } from '../scenarios/recovery';
import type { SpreadLatencyResult } from '../scenarios/spread-latency';
import type { CoordinationResult } from '../scenarios/coordination';
import type { ThroughputResult } from '../scenarios/throughput';
import type { ProfileSummary } from './profile-summary';

/** A bench target: what was measured and whether it met the target. */
export type Target = { readonly met: boolean } & Record<string, unknown>;

/** A run whose rate is also given as a ratio to this run's ceiling. */
export interface RatedRun {
  readonly deliveriesPerSecond: number;
  ratioToCeiling?: number;
}

/** `bench/results/latest.json`: one section per scenario that ran. */
export interface BenchReport {
  readonly meta: Record<string, unknown>;
  ceiling?: CeilingResult & { perSecondAtEnd?: number; reference?: number };
  throughput?: { readonly publisherApi: ThroughputResult; readonly internalHttp: ThroughputResult };
  latency?: LatencyResult;
  /** Publish-to-first-attempt with three instances behind a round-robin load balancer. */
  spreadLatency?: SpreadLatencyResult | { readonly skipped: string };
  recovery?: RecoveryResult;
  backlog?: BacklogResult;
  scaleOut?:
    | { readonly skipped: string }
    | { readonly runs: ThroughputResult[]; readonly slowReceiver: { readonly answerDelayMs: number; readonly runs: ThroughputResult[] } };
  isolation?: IsolationResult;
  /** The isolation scenario with the healthy load published through the internal HTTP endpoint. */
  isolationHttp?: IsolationResult;
  /** Whether the per-endpoint cap and circuit breaker hold across three instances (or why it was skipped). */
  endpointLimits?: EndpointLimitsResult | { readonly skipped: string };
  /** Our engine against pg-boss, BullMQ and the design floor on the throughput workload (or the one line it failed with). */
  peers?: PeersResult | { readonly failed: string };
  /** Issue 36 §1: victims' latencies without and with one user's flood of black-holed host names. */
  dnsFlood?: DnsFloodResult;
  coordination?: CoordinationResult | { readonly skipped: string };
  profiles?: Record<string, ProfileSummary>;
  targets?: Record<string, Target>;
  failures?: string[];
  passed?: boolean;
}
