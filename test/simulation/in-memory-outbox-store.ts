import type { EventType } from '../../src/notifications/catalog/event-catalog';
import type { AttemptOutcome } from '../../src/notifications/delivery/http/attempt-result';
import {
  type AttemptRecord,
  type Claimed,
  type ClaimedDelivery,
  type ClaimFairness,
  type Lease,
  type NewEvent,
  OutboxStore,
  type Placement,
  type RecoveryWindow,
} from '../../src/notifications/delivery/engine/outbox-store';
import { type Ownership, partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import type { TraceContext } from '../../src/notifications/delivery/trace-context/trace-context';
import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import type { WebhookEvent } from '../../src/notifications/delivery/entities/webhook-event.entity';
import type { QueueDepth, QueueDepthReader } from '../../src/notifications/metrics/queue-depth';
import type { DeliveryPurge, PurgedBatch } from '../../src/notifications/retention/delivery-purge';
import { InMemoryPartitionLeases } from './in-memory-partition-leases';

export interface EventRow {
  readonly id: string;
  readonly userId: number;
  readonly type: EventType;
  readonly body: string;
  readonly trace?: TraceContext;
  readonly createdAt: number;
  wasDelivered: boolean;
}

export interface DeliveryRow {
  readonly id: number;
  readonly eventId: string;
  readonly userId: number;
  /** `partitionOf(userId)`, set on insert (`user_partition`). */
  readonly partition: number;
  readonly type: EventType;
  /** Its stream (`webhook_streams`) and number there; null without one. */
  readonly streamId: number | null;
  readonly sequence: number | null;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: number | null;
  lockedBy: string | null;
  lockedUntil: number | null;
  waitingReason: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  readonly createdAt: number;
  updatedAt: number;
}

export interface AttemptRow {
  readonly id: number;
  readonly deliveryId: number;
  readonly attemptNumber: number;
  readonly startedAt: number;
  readonly durationMs: number;
  readonly outcome: AttemptOutcome;
  readonly statusCode: number | null;
}

/**
 * A host's transaction in the simulation: what a store writes through it applies when it commits, in order, and
 * vanishes when it rolls back; work deferred until the commit runs after it (the AfterCommit of the SQL world).
 */
export class SimTransaction {
  state: 'open' | 'committed' | 'rolledBack' = 'open';
  private readonly writes: (() => void)[] = [];
  private readonly afterCommit: (() => void)[] = [];
  private readonly afterRollback: (() => void)[] = [];

  constructor(readonly name: string) {}

  /** A write of this transaction (run on commit). */
  write(apply: () => void): void {
    if (this.state !== 'open') throw new Error(`transaction ${this.name} is ${this.state}`);
    this.writes.push(apply);
  }

  /**
   * Work that starts once this transaction has committed (in a later turn of the event loop, as AfterCommit does), and
   * what starts instead when it rolls back.
   */
  defer(work: () => void, rolledBack?: () => void): void {
    this.afterCommit.push(work);
    if (rolledBack) this.afterRollback.push(rolledBack);
  }

  commit(): void {
    if (this.state !== 'open') throw new Error(`transaction ${this.name} is ${this.state}`);
    this.state = 'committed';
    for (const apply of this.writes.splice(0)) apply();
    this.afterRollback.length = 0;
    for (const work of this.afterCommit.splice(0)) setImmediate(work);
  }

  rollback(): void {
    if (this.state !== 'open') throw new Error(`transaction ${this.name} is ${this.state}`);
    this.state = 'rolledBack';
    this.writes.length = 0;
    this.afterCommit.length = 0;
    for (const work of this.afterRollback.splice(0)) setImmediate(work);
  }
}

const CLAIM_SCAN_FACTOR = 4;

/** A claim whose locking read ran and whose transaction is still open: it commits (leasing what it picked) or rolls back. */
export interface OpenClaim {
  commit(): Claimed;
  rollBack(): void;
}

/**
 * The outbox in memory, with the SQL store's semantics (test/delivery/outbox-store-conformance.e2e-spec.ts holds both to the
 * same cases): leases by token, claims of due free rows oldest first with the per-user share, park, records kept only
 * under the claim's lease token, purge, recovery, claims by owner (checked against `leases`, its partitions table).
 * Every call is atomic: nothing else runs in between, but for a claim opened with {@link InMemoryOutboxStore.openClaim},
 * whose locked rows other claims skip until it commits (MySQL's SKIP LOCKED).
 */
export class InMemoryOutboxStore extends OutboxStore implements DeliveryPurge, QueueDepthReader {
  readonly events = new Map<string, EventRow>();
  readonly deliveries = new Map<number, DeliveryRow>();
  readonly attempts: AttemptRow[] = [];
  /** The users' streams (one per user and URL): the last number given, and whether the stream delivers in order. */
  readonly streams = new Map<number, { readonly userId: number; lastSequence: number; ordered: boolean }>();
  /** The rows each open claim's locking read holds (row id → the claim). */
  private readonly rowLocks = new Map<number, symbol>();
  private nextDeliveryId = 1;

  /** The id of the latest delivery stored (0 before the first). */
  get lastDeliveryId(): number {
    return this.nextDeliveryId - 1;
  }
  private nextAttemptId = 1;
  private nextStreamId = 1;

  /** A new stream of `userId` (the preferences' part: a URL saved); its id. */
  addStream(userId: number, ordered = false): number {
    const id = this.nextStreamId++;
    this.streams.set(id, { userId, lastSequence: 0, ordered });
    return id;
  }

  /** `leases`: the partitions table that claims by owner look at (the same one the instances take and renew leases in). */
  constructor(readonly leases: InMemoryPartitionLeases = new InMemoryPartitionLeases()) {
    super();
  }

  enqueue(events: readonly NewEvent[], placeOf: (event: NewEvent) => Placement, lease: Lease): Promise<ClaimedDelivery[]> {
    if (events.length === 0) return Promise.resolve([]);
    this.insertEvents(events, placeOf, lease);
    return Promise.resolve(this.claimedBy(lease));
  }

  enqueueWithin(transaction: unknown, events: readonly NewEvent[], placeOf: (event: NewEvent) => Placement, lease: Lease): Promise<void> {
    if (!(transaction instanceof SimTransaction)) throw new TypeError('InMemoryOutboxStore.enqueueWithin takes a SimTransaction');
    if (events.length > 0) {
      const placements = events.map((event) => placeOf(event));
      transaction.write(() => this.insertEvents(events, (event) => placements[events.indexOf(event)], lease));
    }
    return Promise.resolve();
  }

  leasedWith(lease: Lease): Promise<ClaimedDelivery[]> {
    return Promise.resolve(this.claimedBy(lease));
  }

  anyDue(now: number, owned: Ownership = 'all'): Promise<boolean> {
    // Asked by every poll of every instance: one pass, the streams' heads read only once a row is due.
    let firstPending: Map<number, number> | undefined;
    for (const row of this.deliveries.values()) {
      if (!isDue(row, now)) continue;
      firstPending ??= this.firstPendingByStream();
      if (this.inTurn(row, firstPending) && this.owns(owned, row)) return Promise.resolve(true);
    }
    return Promise.resolve(false);
  }

  nextLeaseExpiry(now: number): Promise<number | null> {
    let next: number | null = null;
    for (const row of this.deliveries.values())
      if (row.lockedBy !== null && row.status === DeliveryStatus.PENDING && row.lockedUntil! >= now)
        next = next === null ? row.lockedUntil! : Math.min(next, row.lockedUntil!);
    return Promise.resolve(next);
  }

  recoverFailed(window: RecoveryWindow, limit: number, placeOf: (index: number) => Placement, lease: Lease): Promise<number> {
    const latest = new Map<string, number>();
    const delivered = new Set<string>();
    for (const row of this.deliveries.values()) {
      latest.set(row.eventId, Math.max(latest.get(row.eventId) ?? 0, row.id));
      if (row.status === DeliveryStatus.DELIVERED || this.events.get(row.eventId)?.wasDelivered) delivered.add(row.eventId);
    }
    const failed = [...this.deliveries.values()]
      .filter(
        (row) =>
          row.userId === window.userId &&
          row.status === DeliveryStatus.FAILED &&
          row.updatedAt >= window.since &&
          row.updatedAt <= window.until &&
          latest.get(row.eventId) === row.id &&
          !delivered.has(row.eventId) &&
          (!window.type || row.type === window.type),
      )
      .sort((a, b) => a.updatedAt - b.updatedAt || a.id - b.id)
      .slice(0, limit);
    failed.forEach((row, index) => this.insertDelivery(row, placeOf(index), lease));
    return Promise.resolve(failed.length);
  }

  enqueueAgain(
    event: Pick<WebhookEvent, 'id' | 'userId' | 'type'>,
    placement: Placement,
    lease: Lease,
  ): Promise<ClaimedDelivery | { readonly queued: number } | { readonly running: number } | null> {
    if (!this.events.has(event.id)) return Promise.resolve(null); // the foreign key refuses it
    const running = this.pendingOf(event.id);
    if (running) return Promise.resolve({ running: running.id });
    // The event's number and stream, kept from its latest delivery.
    const latest = [...this.deliveries.values()].filter((row) => row.eventId === event.id).sort((a, b) => b.id - a.id)[0];
    const numbered = { streamId: latest?.streamId ?? null, sequence: latest?.sequence ?? null };
    const id = this.insertDelivery({ eventId: event.id, userId: event.userId, type: event.type, ...numbered }, placement, lease);
    const [claim] = placement === 'lease' ? this.claimedBy(lease) : [];
    return Promise.resolve(claim ?? { queued: id });
  }

  claimDue(
    limit: number,
    lease: Lease,
    fairness: ClaimFairness = { perUser: limit, heldByUser: new Map() },
    owned: Ownership = 'all',
  ): Promise<Claimed> {
    return Promise.resolve(this.openClaim(limit, lease, fairness, owned).commit());
  }

  /**
   * A claim in two steps, as the SQL store's transaction runs it: its read of due rows and its lock of those it chose
   * (`FOR UPDATE SKIP LOCKED`, by id) now, its UPDATE and COMMIT when {@link OpenClaim.commit} is called. Until then the
   * rows it chose stay locked: another claim may choose them too, but leaves them (it may report `exhausted` while they
   * wait); what it only read is not locked. The read scans the partitions `owned` names, as memory says; the UPDATE leases
   * only rows still due and free whose partition the table says the holder holds. A claim that leases nothing is
   * `exhausted`: claiming again at once would find the same.
   */
  openClaim(
    limit: number,
    lease: Lease,
    fairness: ClaimFairness = { perUser: limit, heldByUser: new Map() },
    owned: Ownership = 'all',
  ): OpenClaim {
    const excluded = [...fairness.heldByUser].filter(([, held]) => held >= fairness.perUser).map(([userId]) => userId);
    const scanLimit = limit * CLAIM_SCAN_FACTOR;
    const locks = Symbol('claim');
    const firstPending = this.firstPendingByStream();
    const rows = [...this.deliveries.values()]
      .filter(
        (row) =>
          isDue(row, lease.now) &&
          this.inTurn(row, firstPending) &&
          (owned === 'all' || owned.partitions.includes(row.partition)) &&
          !excluded.includes(row.userId),
      )
      .sort(claimOrder)
      .slice(0, scanLimit);
    const taken = new Map<number, number>();
    const chosen: number[] = [];
    for (const row of rows) {
      const count = taken.get(row.userId) ?? 0;
      if (count >= fairness.perUser - (fairness.heldByUser.get(row.userId) ?? 0)) continue;
      taken.set(row.userId, count + 1);
      chosen.push(row.id);
      if (chosen.length === limit) break;
    }
    const ids = chosen.filter((id) => !this.rowLocks.has(id));
    for (const id of ids) this.rowLocks.set(id, locks);
    const unlock = () => {
      for (const id of ids) if (this.rowLocks.get(id) === locks) this.rowLocks.delete(id);
    };
    return {
      commit: () => {
        unlock();
        const leased = ids
          .map((id) => this.deliveries.get(id))
          .filter((row): row is DeliveryRow => row !== undefined && isDue(row, lease.now) && this.owns(owned, row));
        for (const row of leased) {
          row.lockedBy = lease.token;
          row.lockedUntil = lease.until;
        }
        const exhausted = leased.length === 0 || (rows.length < scanLimit && chosen.length === rows.length);
        return { claims: leased.length === 0 ? [] : this.claimedBy(lease), exhausted, excluded };
      },
      rollBack: unlock,
    };
  }

  recordAttempts(attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[]): Promise<boolean[]> {
    const held = attempts.map(({ claim }) => this.deliveries.get(claim.id)?.lockedBy === claim.lockToken);
    const updated = new Set<number>();
    attempts.forEach(({ claim, record }, index) => {
      if (!held[index]) return;
      const row = this.deliveries.get(claim.id)!;
      const { result } = record;
      if (!updated.has(row.id)) {
        updated.add(row.id);
        Object.assign(row, {
          status: record.status,
          nextAttemptAt: record.nextAttemptAt,
          lastStatusCode: result.statusCode,
          lastError: truncate(result.error, 512),
          updatedAt: record.startedAt + result.durationMs,
          attemptCount: row.attemptCount + 1,
          lockedBy: null,
          lockedUntil: null,
          waitingReason: null,
        });
      }
      this.attempts.push({
        id: this.nextAttemptId++,
        deliveryId: claim.id,
        attemptNumber: claim.attemptCount + 1,
        startedAt: record.startedAt,
        durationMs: result.durationMs,
        outcome: result.outcome,
        statusCode: result.statusCode,
      });
    });
    // An attempt whose lease is gone may be one an earlier try of this record stored (its answer lost).
    const stored = attempts.map(
      ({ claim, record }, index) =>
        held[index] ||
        this.attempts.some(
          (row) => row.deliveryId === claim.id && row.attemptNumber === claim.attemptCount + 1 && row.startedAt === record.startedAt,
        ),
    );
    return Promise.resolve(stored);
  }

  release(claims: readonly ClaimedDelivery[]): Promise<void> {
    for (const claim of claims) {
      const row = this.deliveries.get(claim.id);
      if (row && row.lockedBy === claim.lockToken) Object.assign(row, { lockedBy: null, lockedUntil: null });
    }
    return Promise.resolve();
  }

  cancel(claim: ClaimedDelivery, now: number, reason: string): Promise<boolean> {
    const row = this.deliveries.get(claim.id);
    if (!row || row.lockedBy !== claim.lockToken) return Promise.resolve(false);
    Object.assign(row, {
      status: DeliveryStatus.CANCELLED,
      nextAttemptAt: null,
      lockedBy: null,
      lockedUntil: null,
      lastError: reason,
      updatedAt: now,
    });
    return Promise.resolve(true);
  }

  queueDepth(now: number, cap: number): Promise<QueueDepth> {
    let due = 0;
    let inFlight = 0;
    let failed = 0;
    for (const row of this.deliveries.values()) {
      if (isDue(row, now)) due++;
      if (row.lockedBy !== null && row.lockedUntil! >= now && row.status === DeliveryStatus.PENDING) inFlight++;
      if (row.status === DeliveryStatus.FAILED) failed++;
    }
    return Promise.resolve({ due: Math.min(due, cap), inFlight: Math.min(inFlight, cap), failed: Math.min(failed, cap) });
  }

  purgeBatch(status: DeliveryStatus, before: number, limit: number): Promise<PurgedBatch> {
    const rows = [...this.deliveries.values()].filter((row) => row.status === status && row.updatedAt < before).slice(0, limit);
    if (rows.length === 0) return Promise.resolve({ matched: 0, deliveries: 0, attempts: 0, events: 0 });
    const ids = new Set(rows.map((row) => row.id));
    if (status === DeliveryStatus.DELIVERED) for (const row of rows) this.events.get(row.eventId)!.wasDelivered = true;
    const before_ = this.attempts.length;
    const kept = this.attempts.filter((attempt) => !ids.has(attempt.deliveryId));
    this.attempts.splice(0, this.attempts.length, ...kept);
    for (const id of ids) this.deliveries.delete(id);
    const referenced = new Set([...this.deliveries.values()].map((row) => row.eventId));
    let events = 0;
    for (const eventId of new Set(rows.map((row) => row.eventId))) {
      if (!referenced.has(eventId) && this.events.delete(eventId)) events++;
    }
    return Promise.resolve({ matched: rows.length, deliveries: ids.size, attempts: before_ - kept.length, events });
  }

  private insertEvents(events: readonly NewEvent[], placeOf: (event: NewEvent) => Placement, lease: Lease): void {
    const duplicate = events.find((event, index) => this.events.has(event.id) || events.findIndex((e) => e.id === event.id) !== index);
    if (duplicate) throw new Error(`Duplicate entry '${duplicate.id}' for key 'PRIMARY'`);
    for (const event of events) {
      this.events.set(event.id, {
        id: event.id,
        userId: event.userId,
        type: event.type,
        body: event.body,
        trace: event.trace,
        createdAt: lease.now,
        wasDelivered: false,
      });
    }
    // Numbered in the order given, each in its stream (gone: no number).
    for (const event of events) {
      const stream = event.streamId == null ? undefined : this.streams.get(event.streamId);
      const numbered = stream ? { streamId: event.streamId!, sequence: ++stream.lastSequence } : { streamId: null, sequence: null };
      this.insertDelivery({ eventId: event.id, userId: event.userId, type: event.type, ...numbered }, placeOf(event), lease);
    }
  }

  /** Whether a claim for `owned` may take `row`: it names the row's partition, and the table says its holder holds it long enough. */
  private owns(owned: Ownership, row: DeliveryRow): boolean {
    return (
      owned === 'all' || (owned.partitions.includes(row.partition) && this.leases.holds(owned.holder, row.partition, owned.leasedPast))
    );
  }

  /**
   * Whether a claim may take `row` as far as order goes: in an ordered stream only its first PENDING delivery (the lowest
   * id), as the SQL stores' claim says (`IN_TURN`).
   */
  inTurn(row: DeliveryRow, firstPending: ReadonlyMap<number, number> = this.firstPendingByStream()): boolean {
    return !this.isOrdered(row.streamId) || (firstPending.get(row.streamId!) ?? row.id) >= row.id;
  }

  /** The id of the first PENDING delivery of each ordered stream that has one. */
  firstPendingByStream(): Map<number, number> {
    const first = new Map<number, number>();
    for (const row of this.deliveries.values())
      if (row.status === DeliveryStatus.PENDING && this.isOrdered(row.streamId))
        first.set(row.streamId!, Math.min(first.get(row.streamId!) ?? row.id, row.id));
    return first;
  }

  /** Whether the stream delivers in order. */
  isOrdered(streamId: number | null): boolean {
    return streamId !== null && (this.streams.get(streamId)?.ordered ?? false);
  }

  private pendingOf(eventId: string): DeliveryRow | undefined {
    return [...this.deliveries.values()].find((row) => row.eventId === eventId && row.status === DeliveryStatus.PENDING);
  }

  /** A new delivery; like the unique index of the SQL stores, never a second PENDING one of an event. */
  private insertDelivery(
    event: { eventId: string; userId: number; type: EventType; streamId: number | null; sequence: number | null },
    placement: Placement,
    lease: Lease,
  ): number {
    if (this.pendingOf(event.eventId)) throw new Error(`Duplicate entry '${event.eventId}' for key 'ux_webhook_deliveries_pending_event'`);
    // Never leased at its insert in an ordered stream: it waits for a claim, which takes it in its turn.
    const leased = placement === 'lease' && !this.isOrdered(event.streamId);
    const parked = typeof placement === 'object' ? placement : null;
    const id = this.nextDeliveryId++;
    this.deliveries.set(id, {
      id,
      eventId: event.eventId,
      userId: event.userId,
      partition: partitionOf(event.userId),
      type: event.type,
      streamId: event.streamId,
      sequence: event.sequence,
      status: DeliveryStatus.PENDING,
      attemptCount: 0,
      nextAttemptAt: parked?.parkUntil ?? lease.now,
      lockedBy: leased ? lease.token : null,
      lockedUntil: leased ? lease.until : null,
      waitingReason: parked?.reason ?? null,
      lastStatusCode: null,
      lastError: null,
      createdAt: lease.now,
      updatedAt: lease.now,
    });
    return id;
  }

  private claimedBy(lease: Lease): ClaimedDelivery[] {
    const claims: ClaimedDelivery[] = [];
    for (const row of this.deliveries.values()) {
      const event = this.events.get(row.eventId);
      if (row.lockedBy !== lease.token || !event) continue;
      claims.push({
        id: row.id,
        eventId: row.eventId,
        userId: row.userId,
        type: row.type,
        attemptCount: row.attemptCount,
        body: event.body,
        trace: event.trace,
        lockedUntil: lease.until,
        lockToken: lease.token,
        sequence: row.sequence,
        ordered: this.isOrdered(row.streamId),
      });
    }
    return claims;
  }
}

function isFree(row: DeliveryRow, now: number): boolean {
  return row.lockedUntil === null || row.lockedUntil < now;
}

/** The order in which claims take due rows (the SQL stores' `ORDER BY next_attempt_at, id`). */
export function claimOrder(a: DeliveryRow, b: DeliveryRow): number {
  return a.nextAttemptAt! - b.nextAttemptAt! || a.id - b.id;
}

export function isDue(row: DeliveryRow, now: number): boolean {
  return row.status === DeliveryStatus.PENDING && row.nextAttemptAt !== null && row.nextAttemptAt <= now && isFree(row, now);
}

function truncate(text: string | null, max: number): string | null {
  return text !== null && text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
