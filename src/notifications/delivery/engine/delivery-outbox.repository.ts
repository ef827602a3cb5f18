import { Inject, Injectable, Logger, type OnModuleInit, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, type QueryResult, type SelectQueryBuilder } from 'typeorm';
import type { EventType } from '../../catalog/event-catalog';
import { isForeignKeyViolation, isUniqueViolation } from '../../common/database/database-errors';
import { isMySql } from '../../common/database/is-mysql';
import { affectedRowsOf } from './affected-rows';
import { dueDeliveries } from './due-deliveries';
import { shortTransaction } from '../../common/database/short-transaction';
import { DeliveryStatus, WebhookDelivery } from '../entities/webhook-delivery.entity';
import { WebhookEvent } from '../entities/webhook-event.entity';
import { DELIVERY_SETTINGS, type DeliverySettings } from '../delivery-settings';
import { storedTraceContext } from '../trace-context/stored-trace-context';
import { type ClaimMode, claimModeFor, distributedServerOf } from './claim-mode';
import type { Claimed, ClaimFairness, ClaimedDelivery, Lease, NewEvent, OutboxStore, Placement, RecoveryWindow } from './outbox-store';
import { type Ownership, PARTITION_COUNT } from '../partitions/partitions';
import {
  INSERT_CHUNK,
  insertAttempts,
  insertDeliveries,
  insertEvents,
  lockStreams,
  nextStatesUpdate,
  type RecordedAttempt,
} from './outbox-write-statements';

/** Tries of an insert that a concurrent cycle of the same event can refuse (the unique PENDING delivery per event). */
const PENDING_CONFLICT_TRIES = 3;
/** A claim looks at up to this many batches' worth of due rows to share its batch between users. */
const CLAIM_SCAN_FACTOR = 4;
/** Thrown to roll a record back when it finds a lease lost: it then locks and reads the rows first. */
const LEASE_LOST = new Error('a lease was lost');

/**
 * The outbox: events, their deliveries and attempts, as the engine's {@link OutboxStore}. The only place that writes
 * them and knows the claim SQL: a lease (`locked_by`, `locked_until`) taken with a conditional UPDATE, after a
 * plain read of due rows and, on MySQL/MariaDB, `SELECT … FOR UPDATE SKIP LOCKED` by id of those chosen, so instances
 * do not contend for the same rows (the read alone in the `conditional-update` {@link ClaimMode}, for TiDB and Vitess). The delivery log
 * reads the same tables through `DeliveryLogRepository`.
 */
@Injectable()
export class DeliveryOutboxRepository implements OutboxStore, OnModuleInit {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly configuredClaimMode: ClaimMode | undefined;
  /** On MySQL/MariaDB: the configured claim mode, until {@link onModuleInit} settles it for the server. */
  private claimMode: ClaimMode;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Optional() @Inject(DELIVERY_SETTINGS) settings?: Pick<DeliverySettings, 'claimMode'>,
  ) {
    this.configuredClaimMode = settings?.claimMode;
    this.claimMode = settings?.claimMode ?? 'skip-locked';
  }

  /** Asks a MySQL-compatible server what it is: TiDB and Vitess claim without SKIP LOCKED ({@link claimModeFor}). */
  async onModuleInit(): Promise<void> {
    if (!isMySql(this.dataSource)) return;
    const [{ version }] = await this.dataSource.query<{ version: string }[]>('SELECT VERSION() AS version');
    this.claimMode = claimModeFor(version, this.configuredClaimMode);
    const server = distributedServerOf(version);
    if (server !== null) this.logger.log(`The database is ${server} (${version}): deliveries are claimed with a conditional update alone`);
  }

  /** Commits events and one delivery per event, each placed as `placeOf` says, and returns the deliveries leased to `lease.token`. */
  async enqueue(events: readonly NewEvent[], placeOf: (event: NewEvent) => Placement, lease: Lease): Promise<ClaimedDelivery[]> {
    if (events.length === 0) return [];
    const inserted = await this.dataSource.transaction((manager) => insertEvents(manager, events, placeOf, lease));
    if (!events.some((event) => placeOf(event) === 'lease')) return [];
    const insertedId = inserted.id;
    const sequences = new Map(inserted.rows.map((row) => [row.id, row.sequence]));
    // Only the new ids are read back: the rest is known already. A lone event (a publish at low rates) needs no read-back:
    // its one delivery's id is the insert's own, one round trip less before its attempt starts. The events are committed:
    // a failed read-back must not turn the publish into an error; the leased rows are then attempted once their lease expires.
    let rows: { id: number | string; event_id: string }[];
    if (events.length === 1 && insertedId !== null) rows = [{ id: insertedId, event_id: events[0].id }];
    else
      try {
        rows = await this.dataSource.query('SELECT id, event_id FROM webhook_deliveries WHERE locked_by = ?', [lease.token]);
      } catch {
        return [];
      }
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
        trace: event.trace,
        sequence: sequences.get(event.id) ?? null,
        ordered: false, // an ordered stream's deliveries are never leased at their insert
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

  /** Whether any delivery of the partitions `owned` is due now and free: a cheap look (one index row) before a claim. */
  async anyDue(now: number, owned: Ownership = 'all'): Promise<boolean> {
    const due = this.ownedDue(this.dataSource.manager, now, owned);
    // A plain read (it locks nothing): the partitions table may be asked here, as the claim's UPDATE does.
    if (owned !== 'all')
      due.andWhere(`d.partition IN (SELECT p.user_partition ${HELD_PARTITIONS})`, { holder: owned.holder, leasedPast: owned.leasedPast });
    const rows = await due.select('d.id', 'id').limit(1).getRawMany();
    return rows.length > 0;
  }

  /** When the earliest lease still running ends (epoch ms), or null when no pending delivery is leased: a scan of the lease index. */
  async nextLeaseExpiry(now: number): Promise<number | null> {
    const [row] = await this.dataSource.query<{ until: number | string | null }[]>(
      'SELECT MIN(locked_until) AS until FROM webhook_deliveries WHERE locked_by IS NOT NULL AND status = ? AND locked_until >= ?',
      [DeliveryStatus.PENDING, now],
    );
    return row?.until === null || row?.until === undefined ? null : Number(row.until);
  }

  /**
   * A new attempt cycle for each of the user's deliveries that ended FAILED in `window` (by their last update) and are
   * still their event's latest delivery (so calling again queues nothing twice), of events never delivered, oldest
   * first, at most `limit`. The new deliveries wait as `placeOf` says (their position in the list given). Returns how
   * many were queued. A recover running at the same time on another instance queues some of them first: the unique
   * PENDING delivery per event refuses the insert, and the next try reads them as queued already. Retention purging one
   * between the read and the insert fails the insert on its event's foreign key: the next try no longer reads it.
   */
  async recoverFailed(window: RecoveryWindow, limit: number, placeOf: (index: number) => Placement, lease: Lease): Promise<number> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.recoverFailedOnce(window, limit, placeOf, lease);
      } catch (error) {
        // Another recover queued some first (the unique PENDING delivery), or retention purged one meanwhile (its event
        // gone): the next try reads neither.
        if (attempt >= PENDING_CONFLICT_TRIES || !(isUniqueViolation(error) || isForeignKeyViolation(error))) throw error;
      }
    }
  }

  private recoverFailedOnce(window: RecoveryWindow, limit: number, placeOf: (index: number) => Placement, lease: Lease): Promise<number> {
    return shortTransaction(this.dataSource, async (manager) => {
      const query = manager
        .createQueryBuilder(WebhookDelivery, 'd')
        .select('d.eventId', 'id')
        .addSelect('d.userId', 'userId')
        .addSelect('d.type', 'type')
        .addSelect('d.streamId', 'streamId')
        .addSelect('d.sequence', 'sequence')
        .where('d.userId = :userId AND d.status = :failed', { userId: window.userId, failed: DeliveryStatus.FAILED })
        .andWhere('d.updatedAt >= :since AND d.updatedAt <= :until', { since: window.since, until: window.until })
        .innerJoin(WebhookEvent, 'e', 'e.id = d.eventId AND e.was_delivered = 0')
        .andWhere(
          "NOT EXISTS (SELECT 1 FROM webhook_deliveries other WHERE other.event_id = d.event_id AND (other.id > d.id OR other.status = 'DELIVERED'))",
        )
        .orderBy('d.updatedAt', 'ASC')
        .limit(limit);
      if (window.type) query.andWhere('d.type = :type', { type: window.type });
      // No locking read: on MariaDB its next-key locks on the user's index range would hold up live inserts for that user.
      const rows = await query.getRawMany<{
        id: string;
        userId: number | string;
        type: EventType;
        streamId: number | string | null;
        sequence: number | string | null;
      }>();
      const events = rows.map((row) => ({
        id: row.id,
        userId: Number(row.userId),
        type: row.type,
        streamId: row.streamId === null ? null : Number(row.streamId),
        sequence: row.sequence === null ? null : Number(row.sequence),
      }));
      const index = new Map(events.map((event, i) => [event.id, i]));
      // Behind what the streams committed before: in the order read (oldest first), each with its event's number.
      const ordered = await lockStreams(
        manager,
        events.map((event) => event.streamId),
      );
      await insertDeliveries(manager, events, (event) => placeOf(index.get(event.id)!), lease, ordered);
      return events.length;
    });
  }

  /**
   * Starts a new attempt cycle for an existing event (manual redelivery): the new delivery (its id alone when not
   * leased), or the id of the event's PENDING delivery when a cycle is running already (one at a time per event), or
   * null when the event is gone (retention removed it meanwhile).
   */
  async enqueueAgain(
    event: Pick<WebhookEvent, 'id' | 'userId' | 'type'>,
    placement: Placement,
    lease: Lease,
  ): Promise<ClaimedDelivery | { readonly queued: number } | { readonly running: number } | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.writeTogether(async (manager) => {
          // The event's number and stream, kept: a redelivery is the same event, queued behind what its stream holds now.
          const [latest] = await manager.query<{ stream_id: number | string | null; sequence: number | string | null }[]>(
            'SELECT stream_id, sequence FROM webhook_deliveries WHERE event_id = ? ORDER BY id DESC LIMIT 1',
            [event.id],
          );
          const streamId = latest?.stream_id == null ? null : Number(latest.stream_id);
          const sequence = latest?.sequence == null ? null : Number(latest.sequence);
          const ordered = await lockStreams(manager, [streamId]);
          await insertDeliveries(manager, [{ ...event, streamId, sequence }], () => placement, lease, ordered);
        });
        // Leased unless its stream is ordered (then it waits, due, for its turn).
        const [claim] = placement === 'lease' ? await this.claimedBy(lease) : [];
        if (claim) return claim;
        // The event's newest delivery: the one just inserted (another cycle starts only once this one has ended).
        const [row] = await this.dataSource.query<{ id: number | string | null }[]>(
          'SELECT MAX(id) AS id FROM webhook_deliveries WHERE event_id = ?',
          [event.id],
        );
        return row?.id === null || row?.id === undefined ? null : { queued: Number(row.id) };
      } catch (error) {
        if (isForeignKeyViolation(error)) return null;
        if (!isUniqueViolation(error) || attempt >= PENDING_CONFLICT_TRIES) throw error;
      }
      const [running] = await this.dataSource.query<{ id: number | string }[]>(
        'SELECT id FROM webhook_deliveries WHERE event_id = ? AND status = ?',
        [event.id, DeliveryStatus.PENDING],
      );
      if (running) return { running: Number(running.id) }; // else it ended meanwhile: try again
    }
  }

  /**
   * Leases up to `limit` due deliveries whose lease is free or expired, oldest first, topping each user up to
   * `fairness.perUser` held. It looks at no more than a few batches' worth of due rows, so one user's large backlog
   * costs a bounded scan and never fills the batch. With an owner, only deliveries of the partitions whose lease it holds
   * at `lease.now`, as the partitions table says both when the rows are picked and when they are leased (a partition
   * taken over in between is left alone): a holder whose lease ended claims nothing, whatever its memory says.
   */
  async claimDue(
    limit: number,
    lease: Lease,
    fairness: ClaimFairness = { perUser: limit, heldByUser: new Map() },
    owned: Ownership = 'all',
  ): Promise<Claimed> {
    const excluded = [...fairness.heldByUser].filter(([, held]) => held >= fairness.perUser).map(([userId]) => userId);
    const scanLimit = limit * CLAIM_SCAN_FACTOR;
    let exhausted = true;
    const claimed = await shortTransaction(this.dataSource, async (manager) => {
      const candidates = this.ownedDue(manager, lease.now, owned)
        .select('d.id', 'id')
        .addSelect('d.userId', 'userId')
        .orderBy('d.nextAttemptAt', 'ASC')
        .addOrderBy('d.id', 'ASC') // the in-memory model's order: a tie never reorders between claims
        .limit(scanLimit);
      if (excluded.length > 0) candidates.andWhere('d.userId NOT IN (:...excluded)', { excluded });
      const rows = await candidates.getRawMany<{ id: number | string; userId: number | string }>();
      const chosen = fairShare(rows, limit, (userId) => fairness.perUser - (fairness.heldByUser.get(userId) ?? 0));
      // Rows left for a later claim: scanned to the limit, or passed over because their user had their share.
      exhausted = rows.length < scanLimit && chosen.length === rows.length;
      const ids = isMySql(this.dataSource) && this.claimMode === 'skip-locked' ? await lockFree(manager, chosen) : chosen;
      if (ids.length === 0) return 0;
      return this.leaseRows(manager, ids, lease, owned);
    });
    // Rows picked but none leased (taken by another claim meanwhile, or their partitions are not this holder's as the
    // table says): claiming again at once would read the same rows. What is left waits for the next reason to claim.
    if (claimed === 0) exhausted = true;
    return { claims: claimed === 0 ? [] : await this.claimedBy(lease), exhausted, excluded };
  }

  /**
   * The claim's conditional UPDATE: leases those of `ids` still due and free and, with an owner, of a partition whose
   * lease it holds as the partitions table says; how many. On MySQL/MariaDB it reads the rows by primary key. Given the
   * choice, the optimizer reads a status index when the rows claimed are most of the PENDING ones (a quiet outbox), and
   * that range scan locks until commit the due rows of other partitions it passes (MariaDB 10.11, at READ COMMITTED too):
   * their owner's claim meanwhile skips them (SKIP LOCKED) and leases nothing, its deliveries waiting for its next poll.
   */
  private async leaseRows(manager: EntityManager, ids: readonly number[], lease: Lease, owned: Ownership): Promise<number> {
    const byPrimaryKey = isMySql(this.dataSource) ? ' FORCE INDEX (PRIMARY)' : '';
    const held =
      owned === 'all' ? '' : ` AND EXISTS (SELECT 1 ${HELD_PARTITIONS} AND p.user_partition = webhook_deliveries.user_partition)`;
    const [sql, parameters] = this.dataSource.driver.escapeQueryWithParameters(
      `UPDATE webhook_deliveries${byPrimaryKey} SET locked_by = :token, locked_until = :until ` +
        'WHERE id IN (:...ids) AND status = :pending AND next_attempt_at <= :now AND (locked_until IS NULL OR locked_until < :now)' +
        held,
      {
        ids,
        token: lease.token,
        until: lease.until,
        now: lease.now,
        pending: DeliveryStatus.PENDING,
        ...(owned === 'all' ? {} : { holder: owned.holder, leasedPast: owned.leasedPast }),
      },
    );
    const result: QueryResult = await manager.queryRunner!.query(sql, parameters, true);
    return result.affected ?? ids.length;
  }

  /**
   * Stores attempts and their deliveries' next states in one transaction, whatever the number of attempts. An attempt
   * whose lease was lost meanwhile (another instance took the delivery over) is not stored: false at its index. On
   * MySQL/MariaDB, while every lease is still held (nearly always), two statements: update the rows still leased with
   * each attempt's token (their count tells that all were), insert the attempts. Otherwise, and on SQLite, three: lock
   * the rows and read who holds them, update those still held, insert their attempts.
   */
  async recordAttempts(attempts: readonly RecordedAttempt[]): Promise<boolean[]> {
    if (attempts.length === 0) return [];
    if (isMySql(this.dataSource) && (await this.recordIfAllLeased(attempts))) return attempts.map(() => true);
    return shortTransaction(this.dataSource, async (manager) => {
      const held = await this.leaseHolders(
        manager,
        attempts.map(({ claim }) => claim.id),
      );
      const kept = attempts.filter(({ claim }) => held.get(claim.id) === claim.lockToken);
      if (kept.length > 0) {
        await manager.query(...nextStatesUpdate(kept));
        await insertAttempts(manager, kept);
      }
      if (kept.length === attempts.length) return attempts.map(() => true);
      const leaseGone = attempts.filter(({ claim }) => held.get(claim.id) !== claim.lockToken);
      const recorded = await this.recordedBefore(manager, leaseGone);
      return attempts.map((attempt) => !leaseGone.includes(attempt) || recorded.has(attempt));
    });
  }

  /** Stores the attempts when every one's lease is still held; else writes nothing (rolled back) and answers false. */
  private async recordIfAllLeased(attempts: readonly RecordedAttempt[]): Promise<boolean> {
    try {
      // READ COMMITTED like every short transaction: at the server's REPEATABLE READ, an UPDATE the optimizer ran as a
      // scan (a small table) kept every row it scanned locked, due ones included, and a claim meanwhile skipped them.
      return await shortTransaction(this.dataSource, async (manager) => {
        if (affectedRowsOf(await manager.query(...nextStatesUpdate(attempts, { whileLeased: true }))) < attempts.length) throw LEASE_LOST;
        await insertAttempts(manager, attempts);
        return true;
      });
    } catch (error) {
      if (error === LEASE_LOST) return false;
      throw error;
    }
  }

  /** Gives up leases this instance will not use (shutdown, no room, lease ending), so any instance can take the deliveries at once. */
  async release(claims: readonly ClaimedDelivery[]): Promise<void> {
    for (const [token, ids] of byToken(claims)) {
      await this.write((manager) =>
        manager
          .createQueryBuilder()
          .update(WebhookDelivery)
          .set({ lockedBy: null, lockedUntil: null })
          .where('id IN (:...ids) AND locked_by = :token', { ids, token })
          .execute(),
      );
    }
  }

  /** Ends a delivery without a request (the user disabled the webhook meanwhile). */
  async cancel(claim: ClaimedDelivery, now: number, reason: string): Promise<boolean> {
    const result = await this.write((manager) =>
      manager
        .createQueryBuilder()
        .update(WebhookDelivery)
        .set({
          status: DeliveryStatus.CANCELLED,
          nextAttemptAt: null,
          lockedBy: null,
          lockedUntil: null,
          lastError: reason,
          updatedAt: now,
        })
        .where('id = :id AND locked_by = :token', { id: claim.id, token: claim.lockToken })
        .execute(),
    );
    return Boolean(result.affected);
  }

  /**
   * A write outside any transaction of ours. On MySQL/MariaDB it autocommits on a pooled connection; on SQLite it takes
   * its turn among the transactions (the one connection may be inside a host's, whose rollback would undo it).
   */
  private write<T>(statement: (manager: EntityManager) => Promise<T>): Promise<T> {
    return isMySql(this.dataSource) ? statement(this.dataSource.manager) : this.dataSource.transaction(statement);
  }

  /** Statements that commit together: {@link write} on SQLite, a short transaction on MySQL/MariaDB. */
  private writeTogether<T>(statements: (manager: EntityManager) => Promise<T>): Promise<T> {
    return isMySql(this.dataSource) ? shortTransaction(this.dataSource, statements) : this.write(statements);
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

  /**
   * Of attempts whose lease is gone, those an earlier try of their record stored (its answer lost): same number and start.
   * Two leases of one delivery never share a start: an attempt starts only while its lease covers its deadline and
   * margin, and the next lease is taken only once that one's end has passed (both by the same stored number).
   */
  private async recordedBefore(manager: EntityManager, attempts: readonly RecordedAttempt[]): Promise<Set<RecordedAttempt>> {
    const ids = [...new Set(attempts.map(({ claim }) => claim.id))];
    const rows: { delivery_id: number | string; attempt_number: number | string; started_at: number | string }[] = await manager.query(
      `SELECT delivery_id, attempt_number, started_at FROM webhook_delivery_attempts WHERE delivery_id IN (${ids.map(() => '?').join(', ')})`,
      ids,
    );
    const found = new Set(rows.map((row) => `${Number(row.delivery_id)} ${Number(row.attempt_number)} ${Number(row.started_at)}`));
    return new Set(attempts.filter(({ claim, record }) => found.has(`${claim.id} ${claim.attemptCount + 1} ${record.startedAt}`)));
  }

  /**
   * The due free deliveries of the partitions `owned` names, as memory says. The claim's UPDATE checks the partitions
   * table agrees ({@link claimDue}); {@link anyDue} only looks.
   */
  private ownedDue(manager: EntityManager, now: number, owned: Ownership): SelectQueryBuilder<WebhookDelivery> {
    const due = dueDeliveries(manager, now).andWhere(IN_TURN);
    if (owned === 'all') return due;
    // No partition: a condition no row meets (an empty IN list is not SQL).
    if (owned.partitions.length === 0) return due.andWhere('1 = 0');
    // A claim reads in due order up to its limit. Owning a wide share (one instance, or a few), the due index gives the rows
    // in that order and about that share of them are this instance's: it stops near the limit. Owning a narrow share, the
    // partitions' due index reads only theirs, but all of them, to sort: at every claim of a large backlog, the whole of it.
    if (isMySql(this.dataSource)) due.useIndex(owned.partitions.length * WIDE_SHARE >= PARTITION_COUNT ? DUE_IN_ORDER : DUE_BY_PARTITION);
    return due.andWhere('d.partition IN (:...partitions)', { partitions: owned.partitions });
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
      traceparent: string | null;
      tracestate: string | null;
      sequence: number | string | null;
      ordered: number | string | boolean | null;
    }[] = await this.dataSource.query(
      'SELECT d.id, d.event_id, d.user_id, d.type, d.attempt_count, e.body, e.traceparent, e.tracestate, d.sequence, st.ordered ' +
        'FROM webhook_deliveries d INNER JOIN webhook_events e ON e.id = d.event_id ' +
        'LEFT JOIN webhook_streams st ON st.id = d.stream_id WHERE d.locked_by = ? ORDER BY d.id',
      [lease.token],
    );
    return rows.map((row) => ({
      id: Number(row.id),
      eventId: row.event_id,
      userId: Number(row.user_id),
      type: row.type,
      attemptCount: Number(row.attempt_count),
      body: row.body,
      trace: storedTraceContext(row.traceparent, row.tracestate),
      lockedUntil: lease.until,
      lockToken: lease.token,
      sequence: row.sequence === null ? null : Number(row.sequence),
      ordered: Boolean(Number(row.ordered ?? 0)),
    }));
  }
}

/**
 * A delivery whose turn it is: in an ordered stream, only the first PENDING one (the lowest id: rows enter a stream in
 * commit order, its lock held by every insert) may be claimed; the ones behind it wait until it is DELIVERED, FAILED or
 * CANCELLED. A plain read of the stream's rows (index `ix_webhook_deliveries_stream`), which a claim's `FOR UPDATE SKIP
 * LOCKED` does not lock: a locking clause of the outer query does not reach into a subquery.
 */
const IN_TURN =
  'NOT EXISTS (SELECT 1 FROM webhook_streams st INNER JOIN webhook_deliveries earlier ON earlier.stream_id = st.id ' +
  "AND earlier.status = 'PENDING' AND earlier.id < d.id WHERE st.id = d.stream_id AND st.ordered = 1)";

const DUE_BY_PARTITION = 'ix_webhook_deliveries_partition_due';
const DUE_IN_ORDER = 'ix_webhook_deliveries_due';
/** Owning at least 1 / WIDE_SHARE of the partitions, a claim scans the due index in order ({@link DUE_IN_ORDER}). */
const WIDE_SHARE = 4;
/**
 * A partition whose lease `:holder` holds past `:leasedPast` (running until then at least, as a renewal counts it; a
 * take waits until it has passed): the claim's condition on `webhook_partitions`.
 */
const HELD_PARTITIONS = 'FROM webhook_partitions p WHERE p.holder = :holder AND p.lease_until > :leasedPast';

/**
 * Of the deliveries `ids`, those no other transaction holds, locked until this one ends (`FOR UPDATE SKIP LOCKED`, by
 * primary key). The claim's scan itself does not lock: a locking range scan also locks the first row past its range
 * (InnoDB, at READ COMMITTED too), which is another partition's, and its owner's claim would skip it and report nothing
 * due (seen as a wake-up that claimed nothing, the delivery waiting for the owner's next poll).
 */
async function lockFree(manager: EntityManager, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await manager
    .createQueryBuilder(WebhookDelivery, 'd')
    .select('d.id', 'id')
    .where('d.id IN (:...ids)', { ids })
    .setLock('pessimistic_write')
    .setOnLocked('skip_locked')
    .getRawMany<{ id: number | string }>();
  return rows.map((row) => Number(row.id));
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
