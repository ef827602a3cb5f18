import type { EventType } from '../../src/notifications/catalog/event-catalog';
import type { DeliverySettings } from '../../src/notifications/delivery/delivery-settings';
import type { Job } from '../../src/notifications/delivery/engine/attempt-runner';
import type { EndpointQueues } from '../../src/notifications/delivery/engine/endpoint-queues';
import type { InstanceCapacity } from '../../src/notifications/delivery/engine/instance-capacity';
import { OutboxEngine } from '../../src/notifications/delivery/engine/outbox-engine.service';
import type { PartitionOwnership } from '../../src/notifications/delivery/partitions/partition-ownership';
import type { ProcessRole } from '../../src/notifications/process-role';
import type { ClaimedDelivery } from '../../src/notifications/delivery/engine/outbox-store';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/notifications/delivery/retry-policy';
import type { DeliveryPurge } from '../../src/notifications/retention/delivery-purge';
import { DeliveryScheduler } from '../../src/notifications/scheduler/delivery-scheduler.service';
import { SimTransaction } from './in-memory-outbox-store';
import { SimClock } from './sim-time';

/** The simulated world's model: its constants, what it tracks of events, deliveries, sends and instances. */
export const START = Date.UTC(2030, 0, 1);
export const SECOND = 1_000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const TIMEOUT_MS = 5_000;
export const LEASE_MS = 60_000;
/** The engine holds at most concurrency × this many deliveries (HELD_PER_SLOT in instance-capacity.ts). */
export const HELD_PER_SLOT = 16;
/** A user's share of an instance: perEndpointConcurrency × this (HELD_PER_ENDPOINT_SLOT in instance-capacity.ts). */
export const HELD_PER_ENDPOINT_SLOT = 4;
/** What a retry cycle may take: the spec's delays, each attempt's deadline, and per attempt the minute tick and a lease. */
export const SCHEDULE_MS = RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0) + MAX_ATTEMPTS * TIMEOUT_MS;
export const SCHEDULE_SLACK_MS = MAX_ATTEMPTS * (MINUTE + 5 * SECOND) + 2 * LEASE_MS + 2 * MINUTE;
/** Retention in the simulation (the service's is 30 and 90 days): short, so purges meet live deliveries. */
export const RETENTION_MS: Record<'DELIVERED' | 'FAILED' | 'CANCELLED', number> = {
  DELIVERED: 15 * MINUTE,
  CANCELLED: 15 * MINUTE,
  FAILED: 90 * MINUTE,
};
export const TRACE_STEPS = 30;
/** How the error of an attempt skipped for an open circuit starts (engine/attempt-record.ts, skippedForOpenCircuit). */
export const SKIPPED_FOR_OPEN_CIRCUIT = 'circuit open for ';
export const SETTLE_TURNS_MAX = 20_000;

export type Mode = 'up' | 'slow' | 'flaky' | 'error' | 'timeout' | 'hang' | 'refused';

export interface SimEvent {
  readonly id: string;
  readonly userId: number;
  readonly type: EventType;
  readonly tx: SimTransaction | null;
  acked: boolean;
  /** When a DELIVERED record of one of its deliveries committed. */
  deliveredAt: number | null;
  purged: boolean;
}

export interface SendRecord {
  readonly instance: Instance;
  readonly userId: number;
  readonly deliveryId: number;
  readonly eventId: string;
  readonly attempt: number;
  readonly endpoint: string;
  readonly startedAt: number;
  completedAt: number | null;
  record: 'none' | 'pending' | 'stored' | 'lost-lease' | 'failed';
  /** When (global time) the lease it was sent under ends. */
  readonly leaseUntil: number;
  /** Sent after its lease (or its partition's) could cover it, because its process was paused since the engine's last look. */
  readonly late: boolean;
  /** Sent while the sending instance's circuit of the endpoint was half-open: the request probes the endpoint. */
  readonly probe: boolean;
}

export type Origin = 'publish' | 'redelivery' | 'recovery';

/** What may make an attempt go out twice: its sender crashed, was paused past its lease, or the database was down then. */
export type DuplicateCause = 'crash' | 'pause' | 'outage';

/** A circuit's cool-down doubles after each failed probe, up to this factor (MAX_COOL_DOWN_FACTOR in circuit-breaker.ts). */
export const MAX_COOL_DOWN_FACTOR = 16;

export interface DeliveryTrack {
  readonly id: number;
  readonly eventId: string;
  readonly deadline: number;
  readonly haltedAtCreation: number;
  /** When the row became visible (its host transaction committed). */
  readonly visibleAt: number;
  /** What created it. */
  readonly origin: Origin;
  /** The instance whose call created it (undefined when a host transaction's commit made it visible). */
  readonly by: Instance | undefined;
  readonly sends: Map<number, SendRecord[]>;
  /** When each recorded attempt's answer came (global time). */
  readonly recordedEnd: Map<number, number>;
  /** The instance whose record of each attempt was stored. */
  readonly recordedBy: Map<number, Instance>;
  /** Seen parked by an open circuit at some point. */
  parked: boolean;
  /** Since when (global time) it has been claimable, an expired lease or due after parking, while some instance had room for it. */
  roomSince: number | null;
  /** When an instance last handed its lease back (a release): claimable from then, by an instance that looks for it after. */
  releasedAt?: number;
  /** Since when it has waited its turn behind earlier due rows in a drain (prompt-pickup allows that a minute at most). */
  waitingTurnSince?: number;
}

export interface Instance {
  readonly slot: number;
  readonly name: string;
  readonly role: ProcessRole;
  readonly clock: SimClock;
  readonly engine: OutboxEngine;
  /** Its engine's partition leases: whether it stands down (its own network down) as it hands partitions over. */
  readonly ownership: PartitionOwnership;
  readonly scheduler: DeliveryScheduler;
  /** Retention's deletes, through this instance's view of the database. */
  readonly purge: DeliveryPurge;
  readonly settings: DeliverySettings;
  alive: boolean;
  /** Its graceful shutdown began: it claims nothing more, draining what it started until it exits. */
  stopping: boolean;
  /** When it started (global time). */
  readonly startedAt: number;
  /** Claims not sent yet per `eventId#attemptNumber`, to know which delivery a request is for (the request names the event). */
  readonly claims: Map<string, ClaimedDelivery[]>;
  readonly inFlight: Map<string, number>;
  inFlightTotal: number;
  /** Its pauses (global time): nothing of the process ran during each. */
  readonly pauses: { readonly from: number; readonly until: number }[];
  /** Until when (global time) a stalled database call (over a second: a slow database or an outage) holds up one of its calls. */
  stalledUntil: number;
  /** When (global time) its latest read of the running leases' ends (`nextLeaseExpiry`, an `all` process) applied. */
  leasesReadAt: number;
  /** The leases that read saw running (its timers then watch each of them end, the earliest first). */
  leasesSeen: ReadonlySet<string>;
  /** When (global time) its latest claim that applied was made (what was due then, it took, room and shares allowing). */
  claimedAt: number;
  /** When (global time) its latest claim that applied took at least one row: a drain making progress. */
  tookAt: number;
  /** The lease end (its own clock) of each partition it took or renewed, as the store answered: what its checks relied on. */
  readonly partitionLeases: Map<number, number>;
}

export interface HostTransaction {
  readonly tx: SimTransaction;
  readonly instance: Instance;
  readonly events: SimEvent[];
  ready: boolean;
}

/** The record of an attempt that made no request (skipped for an open circuit, or one the simulation cannot match). */
export function unsentRecord(instance: Instance, claim: ClaimedDelivery, at: number, record: SendRecord['record']): SendRecord {
  const attempt = claim.attemptCount + 1;
  return {
    instance,
    userId: claim.userId,
    deliveryId: claim.id,
    eventId: claim.eventId,
    attempt,
    endpoint: '',
    startedAt: at,
    completedAt: at,
    record,
    leaseUntil: claim.lockedUntil - instance.clock.skewMs,
    late: false,
    probe: false,
  };
}

/** The capacity inside an instance's engine (white box): how many deliveries it takes on now. */
export function engineCapacityOf(instance: Instance): InstanceCapacity {
  return (instance.engine as unknown as { capacity: InstanceCapacity }).capacity;
}

/** The endpoint queues inside an instance's engine (white box): whose circuit is half-open, so which request is a probe. */
export function engineQueuesOf(instance: Instance): EndpointQueues<Job> {
  return (instance.engine as unknown as { queues: EndpointQueues<Job> }).queues;
}

/** A time of the timeline as the trace writes it: since the run's start. */
export function atTime(time: number): string {
  return `t+${formatMs(time - START)}`;
}

export function formatMs(ms: number): string {
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(Math.round(ms));
  const h = Math.floor(rest / HOUR);
  rest -= h * HOUR;
  const m = Math.floor(rest / MINUTE);
  rest -= m * MINUTE;
  const s = (rest / SECOND).toFixed(3);
  return `${sign}${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${s}s`;
}
