import type { EntityManager } from 'typeorm';
import { partitionOf } from '../partitions/partitions';
import { traceColumns } from '../trace-context/stored-trace-context';
import { DeliveryStatus } from '../entities/webhook-delivery.entity';
import type { AttemptRecord, ClaimedDelivery, Lease, NewEvent, Placement } from './outbox-store';

/**
 * The SQL that writes the outbox's rows for `DeliveryOutboxRepository`: events with their first deliveries, new
 * deliveries of stored events, attempts, and their deliveries' next states. Written out, not built: these run for every
 * event and every attempt.
 */

/** Rows per INSERT (and ids per statement where a list of ids goes into one). */
export const INSERT_CHUNK = 500;

/** An attempt to record, with the claim it was made under. */
export type RecordedAttempt = { readonly claim: ClaimedDelivery; readonly record: AttemptRecord };

/** At most `max` characters, the last an ellipsis when cut (the columns' length). */
function truncate(text: string | null, max: number): string | null {
  return text !== null && text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** The attempts' rows, in one INSERT (per chunk). */
export function insertAttempts(manager: EntityManager, attempts: readonly RecordedAttempt[]): Promise<unknown> {
  return insertRows(
    manager,
    'webhook_delivery_attempts',
    ['delivery_id', 'attempt_number', 'started_at', 'duration_ms', 'outcome', 'status_code', 'error', 'response_excerpt'],
    attempts.map(({ claim, record: { startedAt, result } }) => [
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
  let where = `id IN (${attempts.map(() => '?').join(', ')})`;
  if (whileLeased) {
    where += ` AND locked_by = CASE id ${attempts.map(() => 'WHEN ? THEN ?').join(' ')} END`;
    for (const { claim } of attempts) params.push(claim.id, claim.lockToken);
  }
  const sql =
    `UPDATE webhook_deliveries SET ${columns.join(', ')}, attempt_count = attempt_count + 1, locked_by = NULL, locked_until = NULL, waiting_reason = NULL ` +
    `WHERE ${where}`;
  return [sql, params];
}

/**
 * The events and one delivery each, through `manager` (a transaction). Resolves with the delivery's id when it inserted
 * exactly one (the driver's insert id), null otherwise.
 */
export async function insertEvents(
  manager: EntityManager,
  events: readonly NewEvent[],
  placeOf: (event: NewEvent) => Placement,
  lease: Lease,
): Promise<number | null> {
  await insertRows(
    manager,
    'webhook_events',
    ['id', 'user_id', 'type', 'body', 'traceparent', 'tracestate', 'created_at'],
    events.map((e) => [e.id, e.userId, e.type, e.body, ...traceColumns(e.trace), lease.now]),
  );
  const inserted = await insertDeliveries(manager, events, placeOf, lease);
  return events.length === 1 ? insertIdOf(inserted) : null;
}

/**
 * The id a single-row INSERT generated, from the driver's answer: mysql2's `insertId`, better-sqlite3's `lastInsertRowid`;
 * null when the answer is neither (another driver: the caller reads the row back instead).
 */
function insertIdOf(raw: unknown): number | null {
  const id = typeof raw === 'object' && raw !== null && 'insertId' in raw ? (raw as { insertId: unknown }).insertId : raw;
  const value = typeof id === 'bigint' ? Number(id) : id;
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}

/**
 * New deliveries of these events, placed as `placeOf` says: leased to `lease.token`, due now, or parked. Each in its
 * user's partition, for good: only that partition's owner claims it.
 */
export function insertDeliveries(
  manager: EntityManager,
  events: readonly Pick<NewEvent, 'id' | 'userId' | 'type'>[],
  placeOf: (event: NewEvent) => Placement,
  lease: Lease,
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
        partitionOf(e.userId),
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

/**
 * Multi-row INSERTs written directly: on the hot path TypeORM's insert builder cost more CPU than the
 * database did (it re-scans every parameter of a 500-row statement).
 */
async function insertRows(manager: EntityManager, table: string, columns: readonly string[], rows: readonly unknown[][]): Promise<unknown> {
  const row = `(${columns.map(() => '?').join(', ')})`;
  let last: unknown;
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    last = await manager.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${chunk.map(() => row).join(', ')}`, chunk.flat());
  }
  return last; // the driver's answer to the last statement
}
