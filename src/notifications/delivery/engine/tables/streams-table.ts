import type { EntityManager } from 'typeorm';
import type { NewEvent } from '../outbox-store';
import { placeholders } from './sql-rows';

/**
 * `webhook_streams` as the outbox uses it: each stream's counter (`last_sequence`) numbers its deliveries, and its row
 * lock orders concurrent inserts into one stream. The streams themselves are the preferences' (`WebhookStreamRepository`).
 */

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
      `WHERE id IN (${placeholders(ids.length)})`,
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
  await manager.query(`UPDATE webhook_streams SET last_sequence = last_sequence WHERE id IN (${placeholders(ids.length)})`, ids);
  return orderedOf(await readStreams(manager, ids));
}

async function readStreams(manager: EntityManager, ids: readonly number[]): Promise<Map<number, { last: number; ordered: boolean }>> {
  const rows: { id: number | string; last_sequence: number | string; ordered: number | string | boolean }[] = await manager.query(
    `SELECT id, last_sequence, ordered FROM webhook_streams WHERE id IN (${placeholders(ids.length)})`,
    [...ids],
  );
  return new Map(rows.map((row) => [Number(row.id), { last: Number(row.last_sequence), ordered: Boolean(Number(row.ordered)) }]));
}

function orderedOf(streams: ReadonlyMap<number, { ordered: boolean }>): Set<number> {
  return new Set([...streams].filter(([, stream]) => stream.ordered).map(([id]) => id));
}
