import type { EntityManager } from 'typeorm';
import type { AttemptRecord, ClaimedDelivery } from '../outbox-store';
import { insertRows, placeholders, truncate } from './sql-rows';

/** `webhook_delivery_attempts`: one row per attempt made or skipped, written with its delivery's next state. */

/** An attempt to record, with the claim it was made under. */
export type RecordedAttempt = { readonly claim: ClaimedDelivery; readonly record: AttemptRecord };

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
 * Of these attempts, those an earlier try of their record stored (its answer lost): same number and start. Two leases of
 * one delivery never share a start: an attempt starts only while its lease covers its deadline and margin, and the next
 * lease is taken only once that one's end has passed (both by the same stored number).
 */
export async function storedBefore(manager: EntityManager, attempts: readonly RecordedAttempt[]): Promise<Set<RecordedAttempt>> {
  const ids = [...new Set(attempts.map(({ claim }) => claim.id))];
  const rows: { delivery_id: number | string; attempt_number: number | string; started_at: number | string }[] = await manager.query(
    `SELECT delivery_id, attempt_number, started_at FROM webhook_delivery_attempts WHERE delivery_id IN (${placeholders(ids.length)})`,
    ids,
  );
  const found = new Set(rows.map((row) => `${Number(row.delivery_id)} ${Number(row.attempt_number)} ${Number(row.started_at)}`));
  return new Set(attempts.filter(({ claim, record }) => found.has(`${claim.id} ${claim.attemptCount + 1} ${record.startedAt}`)));
}
