import type { EventType } from '../../catalog/event-catalog';
import type { AttemptResult } from '../http/attempt-result';
import type { TraceContext } from '../trace-context/trace-context';
import type { DeliveryStatus } from '../webhook-delivery.entity';
import type { WebhookEvent } from '../webhook-event.entity';

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
}

export interface NewEvent {
  readonly id: string;
  readonly userId: number;
  readonly type: EventType;
  readonly body: string;
  /** The trace the event is published in, stored with it. */
  readonly trace?: TraceContext;
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
export interface QueueDepth {
  readonly due: number;
  readonly inFlight: number;
  readonly failed: number;
}

/** What one purge batch deleted. */
export interface PurgedBatch {
  /** Deliveries the batch selected (fewer than the limit: nothing more to delete). */
  readonly matched: number;
  readonly deliveries: number;
  readonly attempts: number;
  readonly events: number;
}

/** What one purge batch of slot rows did ({@link OutboxStore.purgeFreeSlots}). */
export interface PurgedSlots {
  /** Endpoints the batch looked at (fewer than the limit: none left after them). */
  readonly matched: number;
  /** Endpoints whose slot rows it deleted (one taken meanwhile keeps its rows). */
  readonly endpoints: number;
  /** The last endpoint it looked at, in key order: where the next batch starts after. */
  readonly last: string | null;
}

/**
 * One of an endpoint's request slots (`perEndpointConcurrency` of them), all instances together: an attempt holds one while
 * its request is in flight, so that the endpoint never has more requests at once however many instances send.
 */
export interface EndpointSlot {
  readonly endpoint: string;
  /** This take's own token: the slot is released only by the one who took it. */
  readonly holder: string;
  /** When the slot frees itself (its holder's lease ends) should its holder die. */
  readonly heldUntil: number;
}

/**
 * An endpoint's probe, taken by this instance ({@link OutboxStore.claimProbe}): its end is stored with its holder, so that a
 * late end (the store was slow, the hold ran out and another instance took the probe) never ends another's probe.
 */
export interface EndpointProbe {
  readonly endpoint: string;
  readonly holder: string;
}

/** What {@link OutboxStore.claimProbe} gives: the probe, or when another instance's hold of it ends. */
export type ProbeTaken = EndpointProbe | { readonly heldUntil: number };

/** What {@link OutboxStore.takeSlot} gives: the slot, or none because all are held (`busy`), or the endpoint's circuit is open until a time. */
export type SlotTaken = EndpointSlot | { readonly busy: true } | { readonly openUntil: number };

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
 * conformance suite (test/outbox-store-conformance.e2e-spec.ts). An abstract class so that it is a Nest DI token.
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

  /** Whether any delivery is PENDING, due at `now` and free (no lease, or an expired one). */
  abstract anyDue(now: number): Promise<boolean>;

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

  /** Leases up to `limit` due free deliveries, oldest due first, each user topped up to `fairness.perUser` held. */
  abstract claimDue(limit: number, lease: Lease, fairness?: ClaimFairness): Promise<Claimed>;

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

  /**
   * Takes the right to probe `endpoint` (the one request its half-open circuit lets through), all instances together, until
   * `until` (the probe's deadline and record): the probe when this instance took it, else when another's hold ends.
   */
  abstract claimProbe(endpoint: string, now: number, until: number): Promise<ProbeTaken>;

  /**
   * The probe ended: failed, no other before `nextProbeAt` (its circuit's new cool-down); answered (null), any time. Only
   * while its holder still holds it: once another instance has taken the probe, that one's end decides.
   */
  abstract probeEnded(probe: EndpointProbe, nextProbeAt: number | null): Promise<void>;

  /**
   * Takes one of the `cap` slots of `endpoint` until `until`, unless all are held or its circuit is open: an instance opened
   * it ({@link circuitOpened}) and no probe has had an answer since. A `probing` taker (its circuit half-open) is let
   * through once the circuit's cool-down is over (then {@link claimProbe} decides who probes); any other is told to wait
   * until then, and becomes a prober itself.
   */
  abstract takeSlot(endpoint: string, cap: number, now: number, until: number, probing: boolean): Promise<SlotTaken>;

  /**
   * Frees these slots (their requests got an answer, or were not made), for every instance at once: never with the
   * releaser's clock, which may run ahead of another's and make the slot look held there for that much longer.
   */
  abstract releaseSlots(slots: readonly EndpointSlot[]): Promise<void>;

  /** An instance opened the endpoint's circuit until `until`: no instance sends to it until a probe gets an answer. */
  abstract circuitOpened(endpoint: string, until: number): Promise<void>;

  /** Adds an unreachable attempt to the endpoint's failures in a row, all instances together; resolves with the new count. */
  abstract countFailure(endpoint: string): Promise<number>;

  /** An instance that saw failures got an answer from the endpoint: its failures in a row start again from 0. */
  abstract clearFailures(endpoint: string): Promise<void>;

  /** Counts due, leased (unexpired) and FAILED deliveries, each capped at `cap`. */
  abstract queueDepth(now: number, cap: number): Promise<QueueDepth>;

  /**
   * Deletes up to `limit` deliveries in `status` last updated before `before`, their attempts, and their events once no
   * delivery refers to them; an event that keeps older deliveries remembers that one was DELIVERED.
   */
  abstract purgeBatch(status: DeliveryStatus, before: number, limit: number): Promise<PurgedBatch>;

  /**
   * Deletes the slot rows of up to `limit` endpoints after `after` (in key order) none of whose slots was held at `before`:
   * all of an endpoint's rows or none, so a take never finds a part of them. The next take of such an endpoint makes them
   * again, its circuit looked at as by any take.
   */
  abstract purgeFreeSlots(before: number, after: string, limit: number): Promise<PurgedSlots>;
}
