// Peer: the design floor. Our engine's tables (made by its own migrations in a scratch database) and durability (every
// state change committed, InnoDB as configured), written with raw mysql2 and nothing else: a publish inserts the
// events and their deliveries in one transaction; a claim leases up to a batch of due deliveries (a locking read that
// skips locked rows, with their bodies, then the lease); `concurrency` senders post them; the attempts' records are
// group-committed as the engine's are (a 20 ms linger, two groups at a time): one UPDATE of the deliveries still leased
// with their token, their final status, and one INSERT of the attempts. No per-user fairness, per-endpoint cap, circuit, partition lease or secret
// decryption: what any outbox must do, and no more. The process of its own: `IpcChild.fork` by the peers scenario.
import { randomUUID } from 'node:crypto';
import { createPool, type Pool, type PoolConnection, type ResultSetHeader, type RowDataPacket } from 'mysql2/promise';
import type { PeerJob } from './peer-types';
import { servePeer } from './serve-peer';
import { type PostResult, succeeded } from './webhook-post';

/** As the engine's migration 1765000000000 and `partitionOf`. */
const PARTITIONS = 256;
const LEASE_MS = 60_000;
/** Records per group at most (the engine's batch size). */
const RECORD_GROUP = 500;
/** Record groups committing at once, as the engine's `RECORD_CONCURRENCY`. */
const RECORD_CONCURRENCY = 2;
/** A record group waits this long for company before it commits, as the engine's `RECORD_LINGER_MS`. */
const RECORD_LINGER_MS = 20;
/** A retry's delay after a failed attempt (the engine's first step); none happens against the bench's receiver. */
const RETRY_MS = 60_000;
/** When nothing is due, how long before the next claim (a publish claims at once). */
const IDLE_POLL_MS = 50;

interface Claim extends PeerJob {
  readonly id: number;
  readonly attemptCount: number;
  readonly token: string;
}

interface Attempt {
  readonly claim: Claim;
  readonly startedAt: number;
  readonly result: PostResult | { readonly error: string; readonly durationMs: number };
}

servePeer(async (input, poster) => {
  const pool = createPool({ uri: input.url, connectionLimit: 10, trace: false, timezone: 'Z', charset: 'utf8mb4' });
  // Every transaction at READ COMMITTED, as the engine's: a claim locks only the rows it takes, never a gap.
  pool.on('connection', (connection) => connection.query('SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED'));
  const queue: Claim[] = [];
  const pending: Attempt[] = [];
  let recording = 0;
  let claiming = false;
  let closing = false;
  let wake: () => void = () => undefined;
  let woken = new Promise<void>((resolve) => (wake = resolve));
  const wakeAll = () => {
    wake();
    woken = new Promise<void>((resolve) => (wake = resolve));
  };

  /** After a claim found nothing due, none until then (or until a publish): senders finishing must not each ask again. */
  let nothingDueUntil = 0;
  /** A publish came while a claim ran: claim again even if that one found nothing. */
  let publishedMeanwhile = false;
  /** Tops the local queue up to twice the senders' number with newly leased due deliveries. */
  const refill = async (published = false) => {
    if (published) publishedMeanwhile = true;
    if (claiming || (!published && Date.now() < nothingDueUntil)) return;
    claiming = true;
    try {
      while (!closing && queue.length < input.concurrency) {
        publishedMeanwhile = false;
        const claims = await claim(pool, 2 * input.concurrency - queue.length);
        if (claims.length === 0 && !publishedMeanwhile) {
          nothingDueUntil = Date.now() + IDLE_POLL_MS;
          break;
        }
        queue.push(...claims);
        wakeAll();
      }
    } catch (error) {
      process.stderr.write(`floor: claim failed: ${(error as Error).message}\n`); // claimed again on the next wake-up
    } finally {
      claiming = false;
    }
  };

  let lingering = false;
  /** Starts a record group after the linger, when one of the two may commit. */
  const flushRecords = () => {
    if (lingering || recording >= RECORD_CONCURRENCY || pending.length === 0) return;
    lingering = true;
    setTimeout(() => {
      lingering = false;
      if (recording >= RECORD_CONCURRENCY || pending.length === 0) return;
      const group = pending.splice(0, RECORD_GROUP);
      recording++;
      void record(pool, group)
        .catch((error: Error) => process.stderr.write(`floor: record failed: ${error.message}\n`))
        .finally(() => {
          recording--;
          flushRecords();
        });
      flushRecords();
    }, RECORD_LINGER_MS);
  };

  const sender = async () => {
    while (!closing) {
      const next = queue.shift();
      if (queue.length < input.concurrency) void refill();
      if (!next) {
        await Promise.race([woken, new Promise((resolve) => setTimeout(resolve, IDLE_POLL_MS))]);
        continue;
      }
      const startedAt = Date.now();
      let result: Attempt['result'];
      try {
        result = await poster.post(next, next.attemptCount + 1);
      } catch (error) {
        result = { error: (error as Error).message, durationMs: Date.now() - startedAt };
      }
      pending.push({ claim: next, startedAt, result });
      flushRecords();
    }
  };
  const senders = Array.from({ length: input.concurrency }, sender);

  return {
    publish: async (jobs) => {
      await publish(pool, jobs);
      void refill(true);
    },
    outcome: async () => {
      const [rows] = await pool.query<RowDataPacket[]>('SELECT status, COUNT(*) AS n FROM webhook_deliveries GROUP BY status');
      const count = (status: string) => Number(rows.find((row) => row.status === status)?.n ?? 0);
      const settings = {
        concurrency: input.concurrency,
        claimBatch: 2 * input.concurrency,
        leaseMs: LEASE_MS,
        recordLingerMs: RECORD_LINGER_MS,
      };
      return { done: count('DELIVERED'), failed: count('FAILED'), settings };
    },
    close: async () => {
      closing = true;
      wakeAll();
      await Promise.all(senders);
      while (recording > 0 || pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 10));
      await pool.end();
    },
  };
});

/** Events and one due delivery each, in one transaction. */
async function publish(pool: Pool, jobs: readonly PeerJob[]): Promise<void> {
  const now = Date.now();
  await transaction(pool, async (connection) => {
    await connection.query('INSERT INTO webhook_events (id, user_id, type, body, created_at) VALUES ?', [
      jobs.map((job) => [job.eventId, job.userId, job.type, job.body, now]),
    ]);
    await connection.query(
      'INSERT INTO webhook_deliveries (event_id, user_id, user_partition, type, status, attempt_count, next_attempt_at, created_at, updated_at) VALUES ?',
      [jobs.map((job) => [job.eventId, job.userId, job.userId % PARTITIONS, job.type, 'PENDING', 0, now, now, now])],
    );
  });
}

/** Leases up to `limit` due free deliveries, oldest first, skipping rows another claim holds; with their bodies. */
async function claim(pool: Pool, limit: number): Promise<Claim[]> {
  const now = Date.now();
  const token = randomUUID();
  return transaction(pool, async (connection) => {
    const [rows] = await connection.query<RowDataPacket[]>(
      'SELECT d.id, d.event_id, d.user_id, d.type, d.attempt_count, e.body FROM webhook_deliveries d ' +
        'INNER JOIN webhook_events e ON e.id = d.event_id ' +
        "WHERE d.status = 'PENDING' AND d.next_attempt_at <= ? AND (d.locked_until IS NULL OR d.locked_until < ?) " +
        'ORDER BY d.next_attempt_at, d.id LIMIT ? FOR UPDATE SKIP LOCKED',
      [now, now, limit],
    );
    if (rows.length === 0) return [];
    await connection.query('UPDATE webhook_deliveries SET locked_by = ?, locked_until = ? WHERE id IN (?)', [
      token,
      now + LEASE_MS,
      rows.map((row) => row.id as number),
    ]);
    return rows.map((row) => ({
      id: Number(row.id),
      eventId: String(row.event_id),
      userId: Number(row.user_id),
      type: String(row.type),
      body: String(row.body),
      attemptCount: Number(row.attempt_count),
      token,
    }));
  });
}

/**
 * Stores attempts and their deliveries' final state in one transaction: the deliveries still leased with each attempt's
 * token get their status (DELIVERED on a 2xx, else PENDING for a retry), and each of those attempts its row. Returns
 * the attempts stored (a lease lost meanwhile stores nothing for its attempt).
 */
async function record(pool: Pool, attempts: readonly Attempt[]): Promise<Set<Attempt>> {
  const now = Date.now();
  return transaction(pool, async (connection) => {
    let kept = attempts;
    if (!(await updateLeased(connection, attempts, now))) {
      // A lease was lost: lock the rows, see which are still held, and store those only.
      await connection.query('ROLLBACK');
      await connection.query('START TRANSACTION');
      const [rows] = await connection.query<RowDataPacket[]>('SELECT id, locked_by FROM webhook_deliveries WHERE id IN (?) FOR UPDATE', [
        attempts.map(({ claim }) => claim.id),
      ]);
      const holders = new Map(rows.map((row) => [Number(row.id), row.locked_by as string | null]));
      kept = attempts.filter(({ claim }) => holders.get(claim.id) === claim.token);
      if (kept.length > 0) await updateLeased(connection, kept, now);
    }
    if (kept.length > 0)
      await connection.query(
        'INSERT INTO webhook_delivery_attempts (delivery_id, attempt_number, started_at, duration_ms, outcome, status_code, error, response_excerpt) VALUES ?',
        [
          kept.map(({ claim, startedAt, result }) => {
            const ok = 'statusCode' in result && succeeded(result);
            const error = 'statusCode' in result ? (ok ? null : `receiver answered ${result.statusCode}`) : result.error.slice(0, 512);
            return [
              claim.id,
              claim.attemptCount + 1,
              startedAt,
              result.durationMs,
              ok ? 'success' : 'http_error',
              'statusCode' in result ? result.statusCode : null,
              error,
              'statusCode' in result ? result.excerpt : null,
            ];
          }),
        ],
      );
    return new Set(kept);
  });
}

/** One UPDATE giving each delivery still leased with its attempt's token its next state; true when every one was. */
async function updateLeased(connection: PoolConnection, attempts: readonly Attempt[], now: number): Promise<boolean> {
  const ok = (attempt: Attempt) => 'statusCode' in attempt.result && succeeded(attempt.result);
  const byId = (value: (attempt: Attempt) => unknown) => attempts.flatMap((attempt) => [attempt.claim.id, value(attempt)]);
  const caseById = `CASE id ${attempts.map(() => 'WHEN ? THEN ?').join(' ')} END`;
  const [result] = await connection.query<ResultSetHeader>(
    `UPDATE webhook_deliveries SET status = ${caseById}, next_attempt_at = ${caseById}, last_status_code = ${caseById}, ` +
      'attempt_count = attempt_count + 1, locked_by = NULL, locked_until = NULL, updated_at = ? ' +
      `WHERE id IN (?) AND locked_by = ${caseById}`,
    [
      ...byId((attempt) => (ok(attempt) ? 'DELIVERED' : 'PENDING')),
      ...byId((attempt) => (ok(attempt) ? null : now + RETRY_MS)),
      ...byId((attempt) => ('statusCode' in attempt.result ? attempt.result.statusCode : null)),
      now,
      attempts.map(({ claim }) => claim.id),
      ...byId((attempt) => attempt.claim.token),
    ],
  );
  return result.affectedRows === attempts.length;
}

async function transaction<T>(pool: Pool, work: (connection: PoolConnection) => Promise<T>): Promise<T> {
  const connection = await pool.getConnection();
  try {
    await connection.query('START TRANSACTION');
    const result = await work(connection);
    await connection.query('COMMIT');
    return result;
  } catch (error) {
    await connection.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    connection.release();
  }
}
