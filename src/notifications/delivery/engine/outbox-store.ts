import type { EventType } from '../../catalog/event-catalog';
import type { AttemptResult } from '../http/attempt-result';
import type { TraceContext } from '../trace-context/trace-context';
import type { Ownership } from '../partitions/partitions';
import type { DeliveryStatus } from '../entities/webhook-delivery.entity';
import type { WebhookEvent } from '../entities/webhook-event.entity';

/** A delivery this worker holds the lease of, with the exact body to send. */
export interface ClaimedDelivery {
  readonly id: number;
  readonly eventId: string;
  readonly userId: number;
  readonly type: EventType;
  readonly attemptCount: number;
  readonly lockToken: string;
  /** When the lease ends (epoch ms): after that another instance may take the delivery. */
  readonly lockedUntil: number;
  readonly body: string;
  /** The trace its event was published in: each attempt is a child span of it. */
  readonly trace?: TraceContext;
  /** Its number in the user's stream of its webhook URL (`X-Service-Sequence`); null for a delivery from before streams. */
  readonly sequence?: number | null;
  /** Its stream delivers in order: once it is final, the next one of the stream may be claimed. */
  readonly ordered?: boolean;
}

export interface NewEvent {
  readonly id: string;
  readonly userId: number;
  readonly type: EventType;
  readonly body: string;
  /** The trace the event is published in, stored with it. */
  readonly trace?: TraceContext;
  /** The user's stream of the webhook's URL (`WebhookTarget.streamId`): the delivery takes its next number. */
  readonly streamId?: number | null;
}

/** Where a new delivery starts: leased to this instance (attempted at once), due in the outbox, or parked until a time. */
export type Placement = 'lease' | 'due' | { readonly parkUntil: number; readonly reason: string };

/** How a claim shares its batch between users. */
export interface ClaimFairness {
  /** At most this many deliveries of one user held at once, the claim's included. */
  readonly perUser: number;
  /** What this instance already holds per user: a user holding `perUser` is left out of the claim. */
  readonly heldByUser: ReadonlyMap<number, number>;
}

export interface Claimed {
  readonly claims: ClaimedDelivery[];
  /** True when the claim took every due delivery it found (of the users not excluded): nothing is left to claim now. */
  readonly exhausted: boolean;
  /** Users left out because they held their share: their due deliveries wait for a later claim. */
  readonly excluded: readonly number[];
}

/** Deliveries waiting for a worker, held by one, and given up on. */
export interface Lease {
  readonly token: string;
  readonly now: number;
  readonly until: number;
}

export interface AttemptRecord {
  readonly startedAt: number;
  readonly result: AttemptResult;
  readonly status: DeliveryStatus;
  readonly nextAttemptAt: number | null;
}

/** The user's FAILED deliveries to recover: last updated from `since` to `until` (epoch ms), of one type or all. */
export interface RecoveryWindow {
  readonly userId: number;
  readonly since: number;
  readonly until: number;
  readonly type?: EventType;
}

/**
 * The outbox as the engine sees it: events, their deliveries and attempts, the leases on them and the claim. The SQL
 * store ({@link DeliveryOutboxRepository}) and the simulation's in-memory store implement it, and both pass one
 * conformance suite (test/delivery/outbox-store-conformance.e2e-spec.ts). An abstract class so that it is a Nest DI
 * token.
 */
export abstract class OutboxStore {
  /** Commits events and one delivery each, placed as `placeOf` says; resolves with the deliveries leased to `lease.token`. */
  abstract enqueue(events: readonly NewEvent[], placeOf: (event: NewEvent) => Placement, lease: Lease): Promise<ClaimedDelivery[]>;

  /** Writes events and one delivery each inside the host's transaction (an `EntityManager` for the SQL store): they commit or roll back with it. */
  abstract enqueueWithin(
    transaction: unknown,
    events: readonly NewEvent[],
    placeOf: (event: NewEvent) => Placement,
    lease: Lease,
  ): Promise<void>;

  /** The deliveries (committed) still leased with `lease`, with their bodies; none after a rollback. */
  abstract leasedWith(lease: Lease): Promise<ClaimedDelivery[]>;

  /** Whether any delivery of the partitions `owned` is PENDING, due at `now` and free (no lease, or an expired one). */
  abstract anyDue(now: number, owned?: Ownership): Promise<boolean>;

  /** When the earliest lease still running at `now` ends, or null when none runs. */
  abstract nextLeaseExpiry(now: number): Promise<number | null>;

  /**
   * A new delivery for each of the user's FAILED deliveries in `window` that is still its event's latest, of an event
   * never delivered, oldest first, at most `limit`; how many. Never a second PENDING delivery of an event.
   */
  abstract recoverFailed(window: RecoveryWindow, limit: number, placeOf: (index: number) => Placement, lease: Lease): Promise<number>;

  /**
   * A new delivery (attempt cycle) of a stored event, placed as `placement` says: the leased one, or the new one's id
   * when it is not leased (`queued`); the id of the event's PENDING delivery when it has one (one cycle at a time per
   * event); null when the event is gone.
   */
  abstract enqueueAgain(
    event: Pick<WebhookEvent, 'id' | 'userId' | 'type'>,
    placement: Placement,
    lease: Lease,
  ): Promise<ClaimedDelivery | { readonly queued: number } | { readonly running: number } | null>;

  /**
   * Leases up to `limit` due free deliveries of the partitions `owned` (all by default; else those whose lease its holder
   * holds at `lease.now`, as the partitions table says), oldest due first, each user topped up to `fairness.perUser` held.
   */
  abstract claimDue(limit: number, lease: Lease, fairness?: ClaimFairness, owned?: Ownership): Promise<Claimed>;

  /**
   * Stores each attempt and its delivery's next state, all or none, but only where the claim's lease token still holds:
   * false at its index otherwise. True also for an attempt an earlier call stored already (same delivery, number and
   * start), so a record retried after its commit's answer was lost reads as stored, once.
   */
  abstract recordAttempts(attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[]): Promise<boolean[]>;

  /** Frees the leases of these claims that are still held with their tokens. */
  abstract release(claims: readonly ClaimedDelivery[]): Promise<void>;

  /** Ends a delivery CANCELLED if its lease is still held with the claim's token; whether it did. */
  abstract cancel(claim: ClaimedDelivery, now: number, reason: string): Promise<boolean>;
}
