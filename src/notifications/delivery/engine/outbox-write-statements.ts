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
 * The events and one delivery each, through `manager` (a transaction), each delivery numbered in its stream. Resolves
 * with the deliveries' rows, and the delivery's id when it inserted exactly one and leased it (the driver's insert id),
 * null otherwise.
 */
export async function insertEvents(
  manager: EntityManager,
  events: readonly NewEvent[],
  placeOf: (event: NewEvent) => Placement,
  lease: Lease,
): Promise<{ readonly id: number | null; readonly rows: readonly DeliveryValues[] }> {
  await insertRows(
    manager,
    'webhook_events',
    ['id', 'user_id', 'type', 'body', 'traceparent', 'tracestate', 'created_at'],
    events.map((e) => [e.id, e.userId, e.type, e.body, ...traceColumns(e.trace), lease.now]),
  );
  const { rows, ordered } = await numberInStreams(manager, events);
  const inserted = await insertDeliveries(manager, rows, placeOf, lease, ordered);
  const leased = events.length === 1 && placementOf(rows[0], placeOf, ordered) === 'lease';
  return { id: leased ? insertIdOf(inserted) : null, rows };
}

/** A delivery to insert: its event, and its stream and number in it (null without a stream). */
export interface DeliveryValues {
  readonly id: string;
  readonly userId: number;
  readonly type: NewEvent['type'];
  readonly streamId: number | null;
  readonly sequence: number | null;
}

/**
 * Gives new events the next numbers of their streams, in the order given: one UPDATE of the streams' counters, which
 * locks their rows until the transaction ends (so a concurrent publish to the same stream waits, then numbers after this
 * one, and a rollback gives the numbers back: no gap), then their new values read back. Rows in id order, all in one
 * statement: two publishes never lock two streams in opposite orders. Answers the rows and the streams that are ordered.
 */
export async function numberInStreams(
  manager: EntityManager,
  events: readonly NewEvent[],
): Promise<{ readonly rows: DeliveryValues[]; readonly ordered: ReadonlySet<number> }> {
  const counts = new Map<number, number>();
  for (const { streamId } of events) if (streamId != null) counts.set(streamId, (counts.get(streamId) ?? 0) + 1);
  const plain = (e: NewEvent): DeliveryValues => ({ id: e.id, userId: e.userId, type: e.type, streamId: null, sequence: null });
  if (counts.size === 0) return { rows: events.map(plain), ordered: new Set() };
  const ids = [...counts.keys()].sort((a, b) => a - b);
  await manager.query(
    `UPDATE webhook_streams SET last_sequence = last_sequence + CASE id ${ids.map(() => 'WHEN ? THEN ?').join(' ')} END ` +
      `WHERE id IN (${ids.map(() => '?').join(', ')})`,
    [...ids.flatMap((id) => [id, counts.get(id)!]), ...ids],
  );
  const streams = await readStreams(manager, ids);
  const next = new Map([...streams].map(([id, { last }]) => [id, last - counts.get(id)! + 1]));
  const rows = events.map((e) => {
    const sequence = e.streamId == null ? undefined : next.get(e.streamId);
    if (sequence === undefined) return plain(e); // its stream is gone: no number
    next.set(e.streamId!, sequence + 1);
    return { ...plain(e), streamId: e.streamId!, sequence };
  });
  return { rows, ordered: orderedOf(streams) };
}

/**
 * Locks these streams until the transaction ends, as a publish to them does, and answers those that are ordered: a new
 * delivery of a numbered event (redelivery, recovery) is inserted behind whatever the stream committed before it.
 */
export async function lockStreams(manager: EntityManager, streamIds: readonly (number | null)[]): Promise<ReadonlySet<number>> {
  const ids = [...new Set(streamIds.filter((id): id is number => id !== null))].sort((a, b) => a - b);
  if (ids.length === 0) return new Set();
  const where = `id IN (${ids.map(() => '?').join(', ')})`;
  await manager.query(`UPDATE webhook_streams SET last_sequence = last_sequence WHERE ${where}`, ids);
  return orderedOf(await readStreams(manager, ids));
}

async function readStreams(manager: EntityManager, ids: readonly number[]): Promise<Map<number, { last: number; ordered: boolean }>> {
  const rows: { id: number | string; last_sequence: number | string; ordered: number | string | boolean }[] = await manager.query(
    `SELECT id, last_sequence, ordered FROM webhook_streams WHERE id IN (${ids.map(() => '?').join(', ')})`,
    [...ids],
  );
  return new Map(rows.map((row) => [Number(row.id), { last: Number(row.last_sequence), ordered: Boolean(Number(row.ordered)) }]));
}

function orderedOf(streams: ReadonlyMap<number, { ordered: boolean }>): Set<number> {
  return new Set([...streams].filter(([, stream]) => stream.ordered).map(([id]) => id));
}

/**
 * Where a delivery starts: as placed, but never leased at its insert in an ordered stream (the one before it may not be
 * final): it waits, due, for a claim, which takes it once it is the stream's first PENDING delivery.
 */
function placementOf(row: DeliveryValues, placeOf: (event: NewEvent) => Placement, ordered: ReadonlySet<number>): Placement {
  const placement = placeOf(row as unknown as NewEvent);
  return placement === 'lease' && row.streamId !== null && ordered.has(row.streamId) ? 'due' : placement;
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
