import type { EntityManager } from 'typeorm';
import type { EventType } from '../../../catalog/event-catalog';
import { partitionOf } from '../../partitions/partitions';
import { storedTraceContext } from '../../trace-context/stored-trace-context';
import { DeliveryStatus, WebhookDelivery } from '../../entities/webhook-delivery.entity';
import { WebhookEvent } from '../../entities/webhook-event.entity';
import type { AttemptRecord, ClaimedDelivery, Lease, NewEvent, Placement, RecoveryWindow } from '../outbox-store';
import type { RecordedAttempt } from './attempts-table';
import type { DeliveryValues } from './streams-table';
import { insertRows, placeholders, truncate } from './sql-rows';

/**
 * `webhook_deliveries`: one attempt cycle of an event, its state, its place in its stream and its lease
 * (`locked_by`, `locked_until`). The statements the outbox writes and reads it with, but the claim's
 * (`delivery-claims.ts`).
 */

/**
 * Where a delivery starts: as placed, but never leased at its insert in an ordered stream (the one before it may not be
 * final): it waits, due, for a claim, which takes it once it is the stream's first PENDING delivery.
 */
export function placementOf(row: DeliveryValues, placeOf: (event: NewEvent) => Placement, ordered: ReadonlySet<number>): Placement {
  const placement = placeOf(row as unknown as NewEvent);
  return placement === 'lease' && row.streamId !== null && ordered.has(row.streamId) ? 'due' : placement;
}

/**
 * New deliveries of these events, placed as `placeOf` says (but never leased in an `ordered` stream): leased to
 * `lease.token`, due now, or parked. Each in its user's partition, for good: only that partition's owner claims it.
 */
export function insertDeliveries(
  manager: EntityManager,
  rows: readonly DeliveryValues[],
  placeOf: (event: NewEvent) => Placement,
  lease: Lease,
  ordered: ReadonlySet<number>,
): Promise<unknown> {
  return insertRows(
    manager,
    'webhook_deliveries',
    [
      'event_id',
      'user_id',
      'user_partition',
      'type',
      'status',
      'attempt_count',
      'next_attempt_at',
      'locked_by',
      'locked_until',
      'waiting_reason',
      'stream_id',
      'sequence',
      'created_at',
      'updated_at',
    ],
    rows.map((e) => {
      const placement = placementOf(e, placeOf, ordered);
      const leased = placement === 'lease';
      const parked = typeof placement === 'object' ? placement : null;
      return [
        e.id,
        e.userId,
        partitionOf(e.userId),
        e.type,
        DeliveryStatus.PENDING,
        0,
        parked?.parkUntil ?? lease.now,
        leased ? lease.token : null,
        leased ? lease.until : null,
        parked?.reason ?? null,
        e.streamId,
        e.sequence,
        lease.now,
        lease.now,
      ];
    }),
  );
}

/**
 * One UPDATE giving every recorded delivery its own next state (a CASE per column, keyed by id); `whileLeased`: only
 * the rows still leased with their attempt's token.
 */
export function nextStatesUpdate(attempts: readonly RecordedAttempt[], { whileLeased = false } = {}): [string, unknown[]] {
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
  let where = `id IN (${placeholders(attempts.length)})`;
  if (whileLeased) {
    where += ` AND locked_by = CASE id ${attempts.map(() => 'WHEN ? THEN ?').join(' ')} END`;
    for (const { claim } of attempts) params.push(claim.id, claim.lockToken);
  }
  const sql =
    `UPDATE webhook_deliveries SET ${columns.join(', ')}, attempt_count = attempt_count + 1, locked_by = NULL, locked_until = NULL, waiting_reason = NULL ` +
    `WHERE ${where}`;
  return [sql, params];
}

/** Who holds each of these deliveries now; with `lock` (MySQL/MariaDB), the rows stay locked until the transaction ends. */
export async function leaseHolders(manager: EntityManager, ids: readonly number[], lock: boolean): Promise<Map<number, string | null>> {
  const rows: { id: number | string; locked_by: string | null }[] = await manager.query(
    `SELECT id, locked_by FROM webhook_deliveries WHERE id IN (${placeholders(ids.length)}) ORDER BY id${lock ? ' FOR UPDATE' : ''}`,
    [...ids],
  );
  return new Map(rows.map((row) => [Number(row.id), row.locked_by]));
}

/** Frees the leases of these deliveries still held with `token`. */
export function releaseLeases(manager: EntityManager, token: string, ids: readonly number[]): Promise<unknown> {
  return manager
    .createQueryBuilder()
    .update(WebhookDelivery)
    .set({ lockedBy: null, lockedUntil: null })
    .where('id IN (:...ids) AND locked_by = :token', { ids, token })
    .execute();
}

/** Ends the delivery CANCELLED if its lease is still held with the claim's token; whether it did. */
export async function cancelLeased(manager: EntityManager, claim: ClaimedDelivery, now: number, reason: string): Promise<boolean> {
  const result = await manager
    .createQueryBuilder()
    .update(WebhookDelivery)
    .set({ status: DeliveryStatus.CANCELLED, nextAttemptAt: null, lockedBy: null, lockedUntil: null, lastError: reason, updatedAt: now })
    .where('id = :id AND locked_by = :token', { id: claim.id, token: claim.lockToken })
    .execute();
  return Boolean(result.affected);
}

/** The ids and events of the deliveries leased with `token`. */
export function leasedRows(manager: EntityManager, token: string): Promise<{ id: number | string; event_id: string }[]> {
  return manager.query('SELECT id, event_id FROM webhook_deliveries WHERE locked_by = ?', [token]);
}

/** The deliveries leased with `lease` (just now), with their bodies. Plain SQL: on the hot path of every claim. */
export async function readLeased(manager: EntityManager, lease: Lease): Promise<ClaimedDelivery[]> {
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
  }[] = await manager.query(
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

/** When the earliest lease still running at `now` ends (epoch ms), or null when none does: a scan of the lease index. */
export async function earliestLeaseEnd(manager: EntityManager, now: number): Promise<number | null> {
  const [row] = await manager.query<{ until: number | string | null }[]>(
    'SELECT MIN(locked_until) AS until FROM webhook_deliveries WHERE locked_by IS NOT NULL AND status = ? AND locked_until >= ?',
    [DeliveryStatus.PENDING, now],
  );
  return row?.until === null || row?.until === undefined ? null : Number(row.until);
}

/** The stream and number of an event's latest delivery (a new cycle keeps them), or nulls. */
export async function numberOfEvent(
  manager: EntityManager,
  eventId: string,
): Promise<{ streamId: number | null; sequence: number | null }> {
  const [latest] = await manager.query<{ stream_id: number | string | null; sequence: number | string | null }[]>(
    'SELECT stream_id, sequence FROM webhook_deliveries WHERE event_id = ? ORDER BY id DESC LIMIT 1',
    [eventId],
  );
  return {
    streamId: latest?.stream_id == null ? null : Number(latest.stream_id),
    sequence: latest?.sequence == null ? null : Number(latest.sequence),
  };
}

/** The id of the event's newest delivery, or null when it has none. */
export async function newestOfEvent(manager: EntityManager, eventId: string): Promise<number | null> {
  const [row] = await manager.query<{ id: number | string | null }[]>('SELECT MAX(id) AS id FROM webhook_deliveries WHERE event_id = ?', [
    eventId,
  ]);
  return row?.id === null || row?.id === undefined ? null : Number(row.id);
}

/** The id of the event's PENDING delivery (one at most), or null. */
export async function pendingOfEvent(manager: EntityManager, eventId: string): Promise<number | null> {
  const [row] = await manager.query<{ id: number | string }[]>('SELECT id FROM webhook_deliveries WHERE event_id = ? AND status = ?', [
    eventId,
    DeliveryStatus.PENDING,
  ]);
  return row ? Number(row.id) : null;
}

/**
 * The user's deliveries that ended FAILED in `window` (by their last update) and are still their event's latest, of
 * events never delivered, oldest first, at most `limit`: what a recovery queues again. No locking read: on MariaDB its
 * next-key locks on the user's index range would hold up live inserts for that user.
 */
export async function failedInWindow(manager: EntityManager, window: RecoveryWindow, limit: number): Promise<DeliveryValues[]> {
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
  const rows = await query.getRawMany<{
    id: string;
    userId: number | string;
    type: EventType;
    streamId: number | string | null;
    sequence: number | string | null;
  }>();
  return rows.map((row) => ({
    id: row.id,
    userId: Number(row.userId),
    type: row.type,
    streamId: row.streamId === null ? null : Number(row.streamId),
    sequence: row.sequence === null ? null : Number(row.sequence),
  }));
}
