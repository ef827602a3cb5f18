import { Inject, Injectable, Logger, type OnModuleInit, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { isForeignKeyViolation, isUniqueViolation } from '../../common/database/database-errors';
import { isMySql } from '../../common/database/is-mysql';
import { shortTransaction } from '../../common/database/short-transaction';
import { DELIVERY_SETTINGS, type DeliverySettings } from '../delivery-settings';
import type { Ownership } from '../partitions/partitions';
import type { WebhookEvent } from '../entities/webhook-event.entity';
import { affectedRowsOf } from './affected-rows';
import { type ClaimMode, claimModeFor, distributedServerOf } from './claim-mode';
import type { Claimed, ClaimFairness, ClaimedDelivery, Lease, NewEvent, OutboxStore, Placement, RecoveryWindow } from './outbox-store';
import { insertAttempts, type RecordedAttempt, storedBefore } from './tables/attempts-table';
import {
  cancelLeased,
  earliestLeaseEnd,
  failedInWindow,
  insertDeliveries,
  leaseHolders,
  leasedRows,
  newestOfEvent,
  nextStatesUpdate,
  numberOfEvent,
  pendingOfEvent,
  placementOf,
  readLeased,
  releaseLeases,
} from './tables/deliveries-table';
import { leaseRows, lockFree, ownedDue } from './tables/delivery-claims';
import { insertEventRows } from './tables/events-table';
import { INSERT_CHUNK, insertIdOf } from './tables/sql-rows';
import { type DeliveryValues, lockStreams, numberInStreams } from './tables/streams-table';

/** Tries of an insert that a concurrent cycle of the same event can refuse (the unique PENDING delivery per event). */
const PENDING_CONFLICT_TRIES = 3;
/** A claim looks at up to this many batches' worth of due rows to share its batch between users. */
const CLAIM_SCAN_FACTOR = 4;
/** Thrown to roll a record back when it finds a lease lost: it then locks and reads the rows first. */
const LEASE_LOST = new Error('a lease was lost');

/**
 * The outbox: events, their deliveries and attempts, as the engine's {@link OutboxStore}. Each table's statements are
 * in `tables/` (one file per table, the claim's apart); this store says which run together, in which transaction, and
 * retries what a concurrent writer can refuse. The only writer of those rows: a lease (`locked_by`, `locked_until`) is
 * taken with a conditional UPDATE, after a plain read of due rows and, on MySQL/MariaDB, `SELECT … FOR UPDATE SKIP
 * LOCKED` by id of those chosen, so instances do not contend for the same rows (the read alone in the
 * `conditional-update` {@link ClaimMode}, for TiDB and Vitess). The delivery log reads the same tables through
 * `DeliveryLogRepository`.
 */
@Injectable()
export class DeliveryOutboxRepository implements OutboxStore, OnModuleInit {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly configuredClaimMode: ClaimMode | undefined;
  /** On MySQL/MariaDB: the configured claim mode, until {@link onModuleInit} settles it for the server. */
  private claimMode: ClaimMode;
  private readonly mysql: boolean;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Optional() @Inject(DELIVERY_SETTINGS) settings?: Pick<DeliverySettings, 'claimMode'>,
  ) {
    this.configuredClaimMode = settings?.claimMode;
    this.claimMode = settings?.claimMode ?? 'skip-locked';
    this.mysql = isMySql(dataSource);
  }

  /** Asks a MySQL-compatible server what it is: TiDB and Vitess claim without SKIP LOCKED ({@link claimModeFor}). */
  async onModuleInit(): Promise<void> {
    if (!this.mysql) return;
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
        rows = await leasedRows(this.dataSource.manager, lease.token);
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
    return readLeased(this.dataSource.manager, lease);
  }

  /** Whether any delivery of the partitions `owned` is due now and free: a cheap look (one index row) before a claim. */
  async anyDue(now: number, owned: Ownership = 'all'): Promise<boolean> {
    // A plain read (it locks nothing): the partitions table may be asked here, as the claim's UPDATE does.
    const due = ownedDue(this.dataSource.manager, now, owned, { mysql: this.mysql, checkHeld: true });
    const rows = await due.select('d.id', 'id').limit(1).getRawMany();
    return rows.length > 0;
  }

  /** When the earliest lease still running ends (epoch ms), or null when no pending delivery is leased: a scan of the lease index. */
  nextLeaseExpiry(now: number): Promise<number | null> {
    return earliestLeaseEnd(this.dataSource.manager, now);
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
      const events = await failedInWindow(manager, window, limit);
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
          const { streamId, sequence } = await numberOfEvent(manager, event.id);
          const ordered = await lockStreams(manager, [streamId]);
          await insertDeliveries(manager, [{ ...event, streamId, sequence }], () => placement, lease, ordered);
        });
        // Leased unless its stream is ordered (then it waits, due, for its turn).
        const [claim] = placement === 'lease' ? await readLeased(this.dataSource.manager, lease) : [];
        if (claim) return claim;
        // The event's newest delivery: the one just inserted (another cycle starts only once this one has ended).
        const queued = await newestOfEvent(this.dataSource.manager, event.id);
        return queued === null ? null : { queued };
      } catch (error) {
        if (isForeignKeyViolation(error)) return null;
        if (!isUniqueViolation(error) || attempt >= PENDING_CONFLICT_TRIES) throw error;
      }
      const running = await pendingOfEvent(this.dataSource.manager, event.id);
      if (running !== null) return { running }; // else it ended meanwhile: try again
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
      const candidates = ownedDue(manager, lease.now, owned, { mysql: this.mysql })
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
      const ids = this.mysql && this.claimMode === 'skip-locked' ? await lockFree(manager, chosen) : chosen;
      if (ids.length === 0) return 0;
      return leaseRows(manager, ids, lease, owned, { mysql: this.mysql });
    });
    // Rows picked but none leased (taken by another claim meanwhile, or their partitions are not this holder's as the
    // table says): claiming again at once would read the same rows. What is left waits for the next reason to claim.
    if (claimed === 0) exhausted = true;
    return { claims: claimed === 0 ? [] : await readLeased(this.dataSource.manager, lease), exhausted, excluded };
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
    if (this.mysql && (await this.recordIfAllLeased(attempts))) return attempts.map(() => true);
    return shortTransaction(this.dataSource, async (manager) => {
      const held = await leaseHolders(
        manager,
        attempts.map(({ claim }) => claim.id),
        this.mysql,
      );
      const kept = attempts.filter(({ claim }) => held.get(claim.id) === claim.lockToken);
      if (kept.length > 0) {
        await manager.query(...nextStatesUpdate(kept));
        await insertAttempts(manager, kept);
      }
      if (kept.length === attempts.length) return attempts.map(() => true);
      const leaseGone = attempts.filter(({ claim }) => held.get(claim.id) !== claim.lockToken);
      const recorded = await storedBefore(manager, leaseGone);
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
    for (const [token, ids] of byToken(claims)) await this.write((manager) => releaseLeases(manager, token, ids));
  }

  /** Ends a delivery without a request (the user disabled the webhook meanwhile). */
  cancel(claim: ClaimedDelivery, now: number, reason: string): Promise<boolean> {
    return this.write((manager) => cancelLeased(manager, claim, now, reason));
  }

  /**
   * A write outside any transaction of ours. On MySQL/MariaDB it autocommits on a pooled connection; on SQLite it takes
   * its turn among the transactions (the one connection may be inside a host's, whose rollback would undo it).
   */
  private write<T>(statement: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.mysql ? statement(this.dataSource.manager) : this.dataSource.transaction(statement);
  }

  /** Statements that commit together: {@link write} on SQLite, a short transaction on MySQL/MariaDB. */
  private writeTogether<T>(statements: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.mysql ? shortTransaction(this.dataSource, statements) : this.write(statements);
  }
}

/**
 * The events and one delivery each, through `manager` (a transaction), each delivery numbered in its stream. Resolves
 * with the deliveries' rows, and the delivery's id when it inserted exactly one and leased it (the driver's insert id),
 * null otherwise.
 */
async function insertEvents(
  manager: EntityManager,
  events: readonly NewEvent[],
  placeOf: (event: NewEvent) => Placement,
  lease: Lease,
): Promise<{ readonly id: number | null; readonly rows: readonly DeliveryValues[] }> {
  await insertEventRows(manager, events, lease.now);
  const { rows, ordered } = await numberInStreams(manager, events);
  const inserted = await insertDeliveries(manager, rows, placeOf, lease, ordered);
  const leased = events.length === 1 && placementOf(rows[0], placeOf, ordered) === 'lease';
  return { id: leased ? insertIdOf(inserted) : null, rows };
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
