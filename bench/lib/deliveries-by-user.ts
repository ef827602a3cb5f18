import type { DataSource } from 'typeorm';
import { type BenchDatabase, openDataSource } from './databases';

/** How one group of users' deliveries stand in the database. */
export interface DeliverySummary {
  /** Delivery rows (one per event and user): an acknowledged event without one is lost. */
  readonly rows: number;
  readonly byStatus: Record<string, number>;
  /** Rows with at least one attempt recorded. */
  readonly attempted: number;
  /** Attempts recorded, summed over the rows. */
  readonly attempts: number;
  /** Of those, attempts skipped without a request because the endpoint's circuit was open (outcome `circuit_open`). */
  readonly skipped: number;
  /** Rows by status, then by their attempt count. */
  readonly byStatusAndAttemptCount: Record<string, Record<number, number>>;
  /** PENDING with a next attempt time: waiting for it. */
  readonly pendingWithNextAttempt: number;
  /** PENDING without one (claimed, in flight). */
  readonly pendingWithoutNextAttempt: number;
  /** Of the PENDING rows with a next attempt, the soonest and the latest, in seconds from the read (negative: overdue). */
  readonly nextAttemptInS: { readonly min: number; readonly max: number } | null;
  /** Last errors stored on the rows that have one (first 80 characters), with counts; at most 10. */
  readonly lastErrors: Record<string, number>;
}

export interface DeliveriesByUser {
  /** Every user but the neighbour. */
  readonly others: DeliverySummary;
  readonly neighbour: DeliverySummary;
}

/**
 * The deliveries of `neighbourId` and of everyone else, read from `webhook_deliveries` with plain SQL on the
 * columns every version of the outbox has (user_id, status, attempt_count, next_attempt_at, last_error), so the
 * bench does not depend on the engine's internals.
 */
export async function deliveriesByUser(database: BenchDatabase, neighbourId: number): Promise<DeliveriesByUser> {
  const dataSource = await openDataSource(database);
  try {
    const now = Date.now();
    return {
      others: await summarize(dataSource, 'user_id <> ?', neighbourId, now),
      neighbour: await summarize(dataSource, 'user_id = ?', neighbourId, now),
    };
  } finally {
    await dataSource.destroy();
  }
}

async function summarize(dataSource: DataSource, where: string, userId: number, now: number): Promise<DeliverySummary> {
  const groups = (await dataSource.query(
    `SELECT status, attempt_count AS attempts, CASE WHEN next_attempt_at IS NULL THEN 0 ELSE 1 END AS has_next,
            COUNT(*) AS n, MIN(next_attempt_at) AS min_next, MAX(next_attempt_at) AS max_next
       FROM webhook_deliveries WHERE ${where}
      GROUP BY status, attempt_count, CASE WHEN next_attempt_at IS NULL THEN 0 ELSE 1 END`,
    [userId],
  )) as {
    status: string;
    attempts: number | string;
    has_next: number | string;
    n: number | string;
    min_next: number | string | null;
    max_next: number | string | null;
  }[];
  const errors = (await dataSource.query(
    `SELECT last_error AS error, COUNT(*) AS n FROM webhook_deliveries WHERE ${where} AND last_error IS NOT NULL GROUP BY last_error ORDER BY COUNT(*) DESC`,
    [userId],
  )) as { error: string; n: number | string }[];
  const [skippedRow] = (await dataSource.query(
    `SELECT COUNT(*) AS n FROM webhook_delivery_attempts a INNER JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.${where} AND a.outcome = 'circuit_open'`,
    [userId],
  )) as { n: number | string }[];
  const byStatus: Record<string, number> = {};
  const byStatusAndAttemptCount: Record<string, Record<number, number>> = {};
  let rows = 0;
  let attempted = 0;
  let attempts = 0;
  let pendingWithNextAttempt = 0;
  let pendingWithoutNextAttempt = 0;
  let minNext = Infinity;
  let maxNext = -Infinity;
  for (const group of groups) {
    const n = Number(group.n);
    const count = Number(group.attempts);
    rows += n;
    byStatus[group.status] = (byStatus[group.status] ?? 0) + n;
    const counts = (byStatusAndAttemptCount[group.status] ??= {});
    counts[count] = (counts[count] ?? 0) + n;
    attempts += count * n;
    if (count > 0) attempted += n;
    if (group.status !== 'PENDING') continue;
    if (Number(group.has_next) === 1) {
      pendingWithNextAttempt += n;
      minNext = Math.min(minNext, Number(group.min_next));
      maxNext = Math.max(maxNext, Number(group.max_next));
    } else {
      pendingWithoutNextAttempt += n;
    }
  }
  const lastErrors: Record<string, number> = {};
  for (const { error, n } of errors) {
    const key = error.slice(0, 80);
    if (key in lastErrors || Object.keys(lastErrors).length < 10) lastErrors[key] = (lastErrors[key] ?? 0) + Number(n);
  }
  const seconds = (at: number) => Math.round((at - now) / 100) / 10;
  return {
    rows,
    byStatus,
    attempted,
    attempts,
    skipped: Number(skippedRow.n),
    byStatusAndAttemptCount,
    pendingWithNextAttempt,
    pendingWithoutNextAttempt,
    nextAttemptInS: pendingWithNextAttempt > 0 ? { min: seconds(minNext), max: seconds(maxNext) } : null,
    lastErrors,
  };
}
