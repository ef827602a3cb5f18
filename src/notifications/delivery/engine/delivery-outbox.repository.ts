import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Brackets, DataSource, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import type { EventType } from '../../catalog/event-catalog';
import { isForeignKeyViolation } from '../../common/database-errors';
import { isMySql } from '../../common/is-mysql';
import { shortTransaction } from '../../common/short-transaction';
import type { AttemptResult } from '../http/attempt-result';
import { DeliveryStatus, WebhookDelivery } from '../webhook-delivery.entity';
import { WebhookDeliveryAttempt } from '../webhook-delivery-attempt.entity';
import { WebhookEvent } from '../webhook-event.entity';

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
}

export interface NewEvent {
  readonly id: string;
  readonly userId: number;
  readonly type: EventType;
  readonly body: string;
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

export interface DeliveryPage {
  readonly userId: number;
  readonly limit: number;
  readonly beforeId?: number;
  readonly type?: EventType;
  readonly status?: DeliveryStatus;
}

/** The user's FAILED deliveries to recover: last updated from `since` to `until` (epoch ms), of one type or all. */
export interface RecoveryWindow {
  readonly userId: number;
  readonly since: number;
  readonly until: number;
  readonly type?: EventType;
}

const INSERT_CHUNK = 500;
/** A claim looks at up to this many batches' worth of due rows to share its batch between users. */
const CLAIM_SCAN_FACTOR = 4;

/**
 * The outbox: events, their deliveries and attempts. The only place that knows the claim SQL:
 * a lease (`locked_by`, `locked_until`) taken with a conditional UPDATE, after a
 * `SELECT … FOR UPDATE SKIP LOCKED` on MySQL/MariaDB so instances do not contend for the same rows.
 */
@Injectable()
export class DeliveryOutboxRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Commits events and one delivery per event, each placed as `placeOf` says, and returns the deliveries leased to `lease.token`. */
  async enqueue(events: readonly NewEvent[], placeOf: (event: NewEvent) => Placement, lease: Lease): Promise<ClaimedDelivery[]> {
    if (events.length === 0) return [];
    await this.dataSource.transaction((manager) => insertEvents(manager, events, placeOf, lease));
    if (!events.some((event) => placeOf(event) === 'lease')) return [];
    // Only the new ids are read back: the rest is known already.
    const rows: { id: number | string; event_id: string }[] = await this.dataSource.query(
      'SELECT id, event_id FROM webhook_deliveries WHERE locked_by = ?',
      [lease.token],
    );
    const byId = new Map(events.map((event) => [event.id, event]));
    return rows.map((row) => {
      const event = byId.get(row.event_id)!;
      return {
        id: Number(row.id),
        eventId: event.id,
        userId: event.userId,
        type: event.type,
        attemptCount: 0,
        lockToken: lease.token,
        lockedUntil: lease.until,
        body: event.body,
      };
    });
  }

  /**
   * Inserts events and their deliveries through the caller's transaction (`manager`), placed as `placeOf` says; they
   * commit or roll back with it. Read the leased ones back with {@link leasedWith} once it has committed.
   */
  async enqueueWithin(
    manager: EntityManager,
    events: readonly NewEvent[],
    placeOf: (event: NewEvent) => Placement,
    lease: Lease,
  ): Promise<void> {
    if (events.length > 0) await insertEvents(manager, events, placeOf, lease);
  }

  /** The deliveries still leased with `lease`, with their bodies (none when the transaction that inserted them rolled back). */
  leasedWith(lease: Lease): Promise<ClaimedDelivery[]> {
    return this.claimedBy(lease);
  }

  /** Whether any delivery is due now and free: a cheap look (one index row) before a claim. */
  async anyDue(now: number): Promise<boolean> {
    const rows = await this.due(this.dataSource.manager, now).select('d.id', 'id').limit(1).getRawMany();
    return rows.length > 0;
  }

  /**
   * A new attempt cycle for each of the user's deliveries that ended FAILED in `window` (by their last update) and are
   * still their event's latest delivery (so calling again queues nothing twice), oldest first, at most `limit`. The new
   * deliveries wait as `placeOf` says (their position in the list given). Returns how many were queued.
   */
  recoverFailed(window: RecoveryWindow, limit: number, placeOf: (index: number) => Placement, lease: Lease): Promise<number> {
    return shortTransaction(this.dataSource, async (manager) => {
      const query = manager
        .createQueryBuilder(WebhookDelivery, 'd')
        .select('d.eventId', 'id')
        .addSelect('d.userId', 'userId')
        .addSelect('d.type', 'type')
        .where('d.userId = :userId AND d.status = :failed', { userId: window.userId, failed: DeliveryStatus.FAILED })
        .andWhere('d.updatedAt >= :since AND d.updatedAt <= :until', { since: window.since, until: window.until })
        .andWhere('NOT EXISTS (SELECT 1 FROM webhook_deliveries later WHERE later.event_id = d.event_id AND later.id > d.id)')
        .orderBy('d.updatedAt', 'ASC')
        .limit(limit);
      if (window.type) query.andWhere('d.type = :type', { type: window.type });
      // No locking read: on MariaDB its next-key locks on the user's index range would hold up live inserts for that user.
      const rows = await query.getRawMany<{ id: string; userId: number | string; type: EventType }>();
      const events = rows.map((row) => ({ id: row.id, userId: Number(row.userId), type: row.type }));
      const index = new Map(events.map((event, i) => [event.id, i]));
      await insertDeliveries(manager, events, (event) => placeOf(index.get(event.id)!), lease);
      return events.length;
    });
  }

  /** Starts a new attempt cycle for an existing event (manual redelivery); none when the event is gone (retention removed it meanwhile). */
  async enqueueAgain(event: Pick<WebhookEvent, 'id' | 'userId' | 'type'>, placement: Placement, lease: Lease): Promise<ClaimedDelivery[]> {
    try {
      await insertDeliveries(this.dataSource.manager, [event], () => placement, lease);
    } catch (error) {
      if (isForeignKeyViolation(error)) return [];
      throw error;
    }
    return this.claimedBy(lease);
  }

  /**
   * Leases up to `limit` due deliveries whose lease is free or expired, oldest first, topping each user up to
   * `fairness.perUser` held. It looks at no more than a few batches' worth of due rows, so one user's large backlog
   * costs a bounded scan and never fills the batch.
   */
  async claimDue(limit: number, lease: Lease, fairness: ClaimFairness = { perUser: limit, heldByUser: new Map() }): Promise<Claimed> {
    const excluded = [...fairness.heldByUser].filter(([, held]) => held >= fairness.perUser).map(([userId]) => userId);
    const scanLimit = limit * CLAIM_SCAN_FACTOR;
    let exhausted = true;
    const claimed = await shortTransaction(this.dataSource, async (manager) => {
      const candidates = this.due(manager, lease.now)
        .select('d.id', 'id')
        .addSelect('d.userId', 'userId')
        .orderBy('d.nextAttemptAt', 'ASC')
        .limit(scanLimit);
      if (excluded.length > 0) candidates.andWhere('d.userId NOT IN (:...excluded)', { excluded });
      if (isMySql(this.dataSource)) candidates.setLock('pessimistic_write').setOnLocked('skip_locked');
      const rows = await candidates.getRawMany<{ id: number | string; userId: number | string }>();
      const ids = fairShare(rows, limit, (userId) => fairness.perUser - (fairness.heldByUser.get(userId) ?? 0));
      // Rows left for a later claim: scanned to the limit, or passed over because their user had their share.
      exhausted = rows.length < scanLimit && ids.length === rows.length;
      if (ids.length === 0) return 0;
      const result = await manager
        .createQueryBuilder()
        .update(WebhookDelivery)
        .set({ lockedBy: lease.token, lockedUntil: lease.until })
        .where('id IN (:...ids)', { ids })
        .andWhere('status = :pending AND next_attempt_at <= :now', { pending: DeliveryStatus.PENDING, now: lease.now })
        .andWhere(new Brackets((free) => free.where('locked_until IS NULL').orWhere('locked_until < :now', { now: lease.now })))
        .execute();
      return result.affected ?? ids.length;
    });
    return { claims: claimed === 0 ? [] : await this.claimedBy(lease), exhausted, excluded };
  }

  /**
   * Parks leased deliveries until `until` without an attempt (their endpoint's circuit is open), and every other
   * pending delivery of the same user and types that is free and due before then: none of them is failed, each gets
   * its attempts on schedule once the endpoint answers.
   */
  async park(
    claims: readonly ClaimedDelivery[],
    endpoint: { userId: number; types: readonly EventType[] },
    until: number,
    reason: string,
    now: number,
  ): Promise<number> {
    let parked = 0;
    for (const [token, ids] of byToken(claims)) {
      const result = await this.dataSource
        .createQueryBuilder()
        .update(WebhookDelivery)
        .set({ nextAttemptAt: until, waitingReason: reason, lockedBy: null, lockedUntil: null })
        .where('id IN (:...ids) AND locked_by = :token', { ids, token })
        .execute();
      parked += result.affected ?? 0;
    }
    if (endpoint.types.length === 0) return parked;
    const waiting = await this.dataSource
      .createQueryBuilder()
      .update(WebhookDelivery)
      .set({ nextAttemptAt: until, waitingReason: reason })
      .where('user_id = :userId AND type IN (:...types) AND status = :pending AND next_attempt_at < :until', {
        userId: endpoint.userId,
        types: endpoint.types,
        pending: DeliveryStatus.PENDING,
        until,
      })
      .andWhere(new Brackets((free) => free.where('locked_until IS NULL').orWhere('locked_until < :now', { now })))
      .execute();
    return parked + (waiting.affected ?? 0);
  }

  /**
   * Stores attempts and their deliveries' next states in one transaction of three statements,
   * whatever the number of attempts: lock the rows, update them all, insert the attempts. An attempt
   * whose lease was lost meanwhile (another instance took the delivery over) is not stored: false at
   * its index.
   */
  async recordAttempts(attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[]): Promise<boolean[]> {
    if (attempts.length === 0) return [];
    return shortTransaction(this.dataSource, async (manager) => {
      const held = await this.leaseHolders(
        manager,
        attempts.map(({ claim }) => claim.id),
      );
      const stored = attempts.map(({ claim }) => held.get(claim.id) === claim.lockToken);
      const kept = attempts.filter((_, index) => stored[index]);
      if (kept.length === 0) return stored;
      await manager.query(...nextStatesUpdate(kept));
      await insertRows(
        manager,
        'webhook_delivery_attempts',
        ['delivery_id', 'attempt_number', 'started_at', 'duration_ms', 'outcome', 'status_code', 'error', 'response_excerpt'],
        kept.map(({ claim, record: { startedAt, result } }) => [
          claim.id,
          claim.attemptCount + 1,
          startedAt,
          result.durationMs,
          result.outcome,
          result.statusCode,
          truncate(result.error, 512),
          result.responseExcerpt,
        ]),
      );
      return stored;
    });
  }

  /** Gives up leases this instance will not use (shutdown, no room, lease ending), so any instance can take the deliveries at once. */
  async release(claims: readonly ClaimedDelivery[]): Promise<void> {
    for (const [token, ids] of byToken(claims)) {
      await this.dataSource
        .createQueryBuilder()
        .update(WebhookDelivery)
        .set({ lockedBy: null, lockedUntil: null })
        .where('id IN (:...ids) AND locked_by = :token', { ids, token })
        .execute();
    }
  }

  /** Ends a delivery without a request (the user disabled the webhook meanwhile). */
  async cancel(claim: ClaimedDelivery, now: number, reason: string): Promise<boolean> {
    const result = await this.dataSource
      .createQueryBuilder()
      .update(WebhookDelivery)
      .set({ status: DeliveryStatus.CANCELLED, nextAttemptAt: null, lockedBy: null, lockedUntil: null, lastError: reason, updatedAt: now })
      .where('id = :id AND locked_by = :token', { id: claim.id, token: claim.lockToken })
      .execute();
    return Boolean(result.affected);
  }

  /** The user's deliveries, newest first, after the `beforeId` cursor. */
  listForUser(page: DeliveryPage): Promise<WebhookDelivery[]> {
    const query = this.dataSource
      .getRepository(WebhookDelivery)
      .createQueryBuilder('d')
      .where('d.userId = :userId', { userId: page.userId })
      .orderBy('d.id', 'DESC')
      .limit(page.limit);
    if (page.beforeId !== undefined) query.andWhere('d.id < :beforeId', { beforeId: page.beforeId });
    if (page.type) query.andWhere('d.type = :type', { type: page.type });
    if (page.status) query.andWhere('d.status = :status', { status: page.status });
    return query.getMany();
  }

  findForUser(userId: number, id: number): Promise<WebhookDelivery | null> {
    return this.dataSource.getRepository(WebhookDelivery).findOneBy({ id, userId });
  }

  attemptsOf(deliveryId: number): Promise<WebhookDeliveryAttempt[]> {
    return this.dataSource.getRepository(WebhookDeliveryAttempt).find({ where: { deliveryId }, order: { attemptNumber: 'ASC' } });
  }

  findEvent(id: string): Promise<WebhookEvent | null> {
    return this.dataSource.getRepository(WebhookEvent).findOneBy({ id });
  }

  /**
   * Counts the queue in one statement of three capped subqueries, each an index range scan: due (the claim's own
   * condition) on `(status, next_attempt_at)`, in flight on `locked_by`, failed on the `status` prefix. The caps bound
   * the work a scrape can cause however large the backlog grows.
   */
  async queueDepth(now: number, cap: number): Promise<QueueDepth> {
    const capped = (query: SelectQueryBuilder<WebhookDelivery>, alias: string) => {
      const [sql, params] = query.select('1', 'one').limit(cap).getQueryAndParameters();
      return { sql: `(SELECT COUNT(*) FROM (${sql}) ${alias})`, params };
    };
    const manager = this.dataSource.manager;
    const due = capped(this.due(manager, now), 'due_rows');
    const inFlight = capped(
      manager
        .createQueryBuilder(WebhookDelivery, 'd')
        .where('d.lockedBy IS NOT NULL AND d.lockedUntil >= :now AND d.status = :pending', { now, pending: DeliveryStatus.PENDING }),
      'leased_rows',
    );
    const failed = capped(
      manager.createQueryBuilder(WebhookDelivery, 'd').where('d.status = :failed', { failed: DeliveryStatus.FAILED }),
      'failed_rows',
    );
    const [row] = await this.dataSource.query<{ due: number | string; inFlight: number | string; failed: number | string }[]>(
      `SELECT ${due.sql} AS due, ${inFlight.sql} AS inFlight, ${failed.sql} AS failed`,
      [...due.params, ...inFlight.params, ...failed.params],
    );
    return { due: Number(row.due), inFlight: Number(row.inFlight), failed: Number(row.failed) };
  }

  /**
   * Deletes up to `limit` deliveries in `status` last updated before `before` (epoch ms), their attempts, and their
   * events once no delivery refers to them (a redelivery keeps its event), in one short transaction. Finished
   * deliveries never change again, so instances purging at the same time only delete the same rows twice.
   */
  purgeBatch(status: DeliveryStatus, before: number, limit: number): Promise<PurgedBatch> {
    return shortTransaction(this.dataSource, async (manager) => {
      const rows = await manager
        .createQueryBuilder(WebhookDelivery, 'd')
        .select('d.id', 'id')
        .addSelect('d.eventId', 'eventId')
        .where('d.status = :status', { status })
        .andWhere('d.updatedAt < :before', { before })
        .limit(limit)
        .getRawMany<{ id: number | string; eventId: string }>();
      if (rows.length === 0) return { matched: 0, deliveries: 0, attempts: 0, events: 0 };
      const ids = rows.map((row) => Number(row.id));
      const eventIds = [...new Set(rows.map((row) => row.eventId))];
      const attempts = await manager
        .createQueryBuilder()
        .delete()
        .from(WebhookDeliveryAttempt)
        .where('delivery_id IN (:...ids)', { ids })
        .execute();
      const deliveries = await manager.createQueryBuilder().delete().from(WebhookDelivery).where('id IN (:...ids)', { ids }).execute();
      const events = await manager
        .createQueryBuilder()
        .delete()
        .from(WebhookEvent)
        .where('id IN (:...eventIds)', { eventIds })
        .andWhere('NOT EXISTS (SELECT 1 FROM webhook_deliveries remaining WHERE remaining.event_id = webhook_events.id)')
        .execute();
      return { matched: rows.length, deliveries: deliveries.affected ?? 0, attempts: attempts.affected ?? 0, events: events.affected ?? 0 };
    });
  }

  /** Who holds each of these deliveries now; on MySQL/MariaDB the rows stay locked until the transaction ends. */
  private async leaseHolders(manager: EntityManager, ids: readonly number[]): Promise<Map<number, string | null>> {
    const lock = isMySql(this.dataSource) ? ' FOR UPDATE' : '';
    const rows: { id: number | string; locked_by: string | null }[] = await manager.query(
      `SELECT id, locked_by FROM webhook_deliveries WHERE id IN (${ids.map(() => '?').join(', ')}) ORDER BY id${lock}`,
      [...ids],
    );
    return new Map(rows.map((row) => [Number(row.id), row.locked_by]));
  }

  private due(manager: EntityManager, now: number): SelectQueryBuilder<WebhookDelivery> {
    return manager
      .createQueryBuilder(WebhookDelivery, 'd')
      .where('d.status = :pending', { pending: DeliveryStatus.PENDING })
      .andWhere('d.nextAttemptAt <= :now', { now })
      .andWhere(new Brackets((free) => free.where('d.lockedUntil IS NULL').orWhere('d.lockedUntil < :now', { now })));
  }

  /** The deliveries leased with `lease` (just now), with their bodies. Plain SQL: on the hot path of every claim. */
  private async claimedBy(lease: Lease): Promise<ClaimedDelivery[]> {
    const rows: {
      id: number | string;
      event_id: string;
      user_id: number | string;
      type: EventType;
      attempt_count: number | string;
      body: string;
    }[] = await this.dataSource.query(
      'SELECT d.id, d.event_id, d.user_id, d.type, d.attempt_count, e.body FROM webhook_deliveries d ' +
        'INNER JOIN webhook_events e ON e.id = d.event_id WHERE d.locked_by = ? ORDER BY d.id',
      [lease.token],
    );
    return rows.map((row) => ({
      id: Number(row.id),
      eventId: row.event_id,
      userId: Number(row.user_id),
      type: row.type,
      attemptCount: Number(row.attempt_count),
      body: row.body,
      lockedUntil: lease.until,
      lockToken: lease.token,
    }));
  }
}

function truncate(text: string | null, max: number): string | null {
  return text !== null && text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** One UPDATE giving every recorded delivery its own next state (a CASE per column, keyed by id). */
function nextStatesUpdate(attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[]): [string, unknown[]] {
  const params: unknown[] = [];
  const perRow = (column: string, value: (record: AttemptRecord) => unknown) => {
    for (const { claim, record } of attempts) params.push(claim.id, value(record));
    return `${column} = CASE id ${attempts.map(() => 'WHEN ? THEN ?').join(' ')} END`;
  };
  const columns = [
    perRow('status', (record) => record.status),
    perRow('next_attempt_at', (record) => record.nextAttemptAt),
    perRow('last_status_code', (record) => record.result.statusCode),
    perRow('last_error', (record) => truncate(record.result.error, 512)),
    perRow('updated_at', (record) => record.startedAt + record.result.durationMs),
  ];
  params.push(...attempts.map(({ claim }) => claim.id));
  const sql =
    `UPDATE webhook_deliveries SET ${columns.join(', ')}, attempt_count = attempt_count + 1, locked_by = NULL, locked_until = NULL, waiting_reason = NULL ` +
    `WHERE id IN (${attempts.map(() => '?').join(', ')})`;
  return [sql, params];
}

/** The events and one delivery each, through `manager` (a transaction). */
async function insertEvents(
  manager: EntityManager,
  events: readonly NewEvent[],
  placeOf: (event: NewEvent) => Placement,
  lease: Lease,
): Promise<void> {
  await insertRows(
    manager,
    'webhook_events',
    ['id', 'user_id', 'type', 'body', 'created_at'],
    events.map((e) => [e.id, e.userId, e.type, e.body, lease.now]),
  );
  await insertDeliveries(manager, events, placeOf, lease);
}

/** New deliveries of these events, placed as `placeOf` says: leased to `lease.token`, due now, or parked. */
function insertDeliveries(
  manager: EntityManager,
  events: readonly Pick<NewEvent, 'id' | 'userId' | 'type'>[],
  placeOf: (event: NewEvent) => Placement,
  lease: Lease,
): Promise<void> {
  return insertRows(
    manager,
    'webhook_deliveries',
    [
      'event_id',
      'user_id',
      'type',
      'status',
      'attempt_count',
      'next_attempt_at',
      'locked_by',
      'locked_until',
      'waiting_reason',
      'created_at',
      'updated_at',
    ],
    events.map((e) => {
      const placement = placeOf(e as NewEvent);
      const leased = placement === 'lease';
      const parked = typeof placement === 'object' ? placement : null;
      return [
        e.id,
        e.userId,
        e.type,
        DeliveryStatus.PENDING,
        0,
        parked?.parkUntil ?? lease.now,
        leased ? lease.token : null,
        leased ? lease.until : null,
        parked?.reason ?? null,
        lease.now,
        lease.now,
      ];
    }),
  );
}

/** The ids of these claims grouped by lease token, in chunks a statement can take. */
function byToken(claims: readonly ClaimedDelivery[]): [string, number[]][] {
  const groups: [string, number[]][] = [];
  for (const token of new Set(claims.map((claim) => claim.lockToken))) {
    const ids = claims.filter((claim) => claim.lockToken === token).map((claim) => claim.id);
    for (let i = 0; i < ids.length; i += INSERT_CHUNK) groups.push([token, ids.slice(i, i + INSERT_CHUNK)]);
  }
  return groups;
}

/** The first `limit` ids in order, taking at most `quota(user)` of any one user. */
function fairShare(
  rows: readonly { id: number | string; userId: number | string }[],
  limit: number,
  quota: (userId: number) => number,
): number[] {
  const taken = new Map<number, number>();
  const ids: number[] = [];
  for (const row of rows) {
    const userId = Number(row.userId);
    const count = taken.get(userId) ?? 0;
    if (count >= quota(userId)) continue;
    taken.set(userId, count + 1);
    ids.push(Number(row.id));
    if (ids.length === limit) break;
  }
  return ids;
}

/**
 * Multi-row INSERTs written directly: on the hot path TypeORM's insert builder cost more CPU than the
 * database did (it re-scans every parameter of a 500-row statement).
 */
async function insertRows(manager: EntityManager, table: string, columns: readonly string[], rows: readonly unknown[][]): Promise<void> {
  const row = `(${columns.map(() => '?').join(', ')})`;
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    await manager.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${chunk.map(() => row).join(', ')}`, chunk.flat());
  }
}
