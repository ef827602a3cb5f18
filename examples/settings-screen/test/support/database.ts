import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { repoRoot } from './repo';

type Statement = { run(...params: unknown[]): unknown };
type Database = { prepare(sql: string): Statement; pragma(source: string): unknown; transaction<T>(fn: () => T): () => T; close(): void };

/** better-sqlite3, the driver the standalone service itself opens its SQLite file with (installed at the repository root). */
function openDatabase(path: string): Database {
  const open = createRequire(`${repoRoot}package.json`)('better-sqlite3') as (file: string) => Database;
  const db = open(path);
  db.pragma('busy_timeout = 5000'); // the running service writes to the same file
  return db;
}

export interface DisabledWebhook {
  readonly userId: number;
  readonly type: string;
  readonly disabledReason: string;
  /** When its failures began and when auto-disable turned it off (epoch ms). */
  readonly failingSince: number;
  readonly disabledAt: number;
  readonly failedAttempts: number;
}

/**
 * What auto-disable leaves behind after hours of failures, written straight into the service's database (the real
 * clock would take 5 hours): the saved webhook turned off with its reason, its health row, and one event whose
 * delivery ended FAILED while it was failing. Answers that event's id.
 */
export function writeDisabledWebhook(dbPath: string, webhook: DisabledWebhook): string {
  const db = openDatabase(dbPath);
  const eventId = randomUUID();
  const { userId, type, failingSince, disabledAt, failedAttempts } = webhook;
  const failedAt = disabledAt - 60_000;
  try {
    db.transaction(() => {
      const updated = db
        .prepare(
          "UPDATE notification_preferences SET enabled = 0, disabled_reason = ?, consecutive_failures = ? WHERE user_id = ? AND type = ? AND channel = 'WEBHOOK'",
        )
        .run(webhook.disabledReason, failedAttempts, userId, type) as { changes: number };
      if (updated.changes !== 1) throw new Error(`No saved ${type} webhook for user ${userId} to disable`);
      db.prepare(
        `INSERT INTO webhook_health (user_id, type, failed_attempts_in_row, failing_since, last_attempt_at, last_outcome,
           last_status_code, last_error, last_success_at, circuit_open_until, disabled_at, updated_at)
         VALUES (?, ?, ?, ?, ?, 'http_error', 500, 'HTTP 500', NULL, NULL, ?, ?)`,
      ).run(userId, type, failedAttempts, failingSince, failedAt, disabledAt, disabledAt);
      const body = JSON.stringify({
        type,
        severity: 'WARNING',
        title: 'Loan expiring soon',
        body: 'Your USD loan expires in 2 hours.',
        createdAt: new Date(failingSince).toISOString(),
        payload: {},
        userId,
      });
      db.prepare('INSERT INTO webhook_events (id, user_id, type, body, created_at) VALUES (?, ?, ?, ?, ?)').run(
        eventId,
        userId,
        type,
        body,
        failingSince,
      );
      db.prepare(
        `INSERT INTO webhook_deliveries (event_id, user_id, type, status, attempt_count, last_status_code, last_error, created_at, updated_at)
         VALUES (?, ?, ?, 'FAILED', 6, 500, 'HTTP 500', ?, ?)`,
      ).run(eventId, userId, type, failingSince, failedAt);
    })();
  } finally {
    db.close();
  }
  return eventId;
}
