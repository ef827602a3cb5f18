import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { sleep } from '../lib/clock';
import type { BenchDatabase, DatabaseServer } from '../lib/databases';
import { IpcChild } from '../lib/ipc';
import type { FaultRates, ReceivedAttempt, ReceiverStart, ReceiverStats } from '../lib/receiver-types';
import { type BenchEvent, postBatch } from '../lib/workload';

export interface FaultRun {
  readonly name: string;
  readonly database: BenchDatabase;
  readonly receiver: IpcChild;
  readonly bases: string[];
  readonly caFile: string;
  readonly logDir: string;
  readonly problems: string[];
  readonly log: (message: string) => void;
  close(): Promise<void>;
}

/** A fresh database and a receiver process of its own (recording every attempt) for one fault scenario. */
export async function startFaultRun(server: DatabaseServer, name: string, faults: FaultRates | null = null): Promise<FaultRun> {
  const logDir = mkdtempSync(join(tmpdir(), `nw-faults-${name}-`));
  const database = await server.create(name.replace(/\W/g, ''));
  const receiver = IpcChild.fork(resolve(__dirname, '../lib/receiver-process.js'), `${name} receiver`);
  await receiver.ready;
  const caFile = join(logDir, 'receiver-ca.pem');
  const { bases } = await receiver.call<ReceiverStart>('start', 4, caFile);
  await receiver.call('configure', { faults, keepAttempts: true });
  return {
    name,
    database,
    receiver,
    bases,
    caFile,
    logDir,
    problems: [],
    log: (message) => process.stderr.write(`[faults ${new Date().toISOString().slice(11, 19)} ${name}] ${message}\n`),
    async close() {
      await receiver.stop();
      await database.drop();
    },
  };
}

/**
 * Publishes batches through whichever instance `pick` names, never more than `window` events ahead of
 * the receiver (so queues stay far shorter than the lease). A failed call (instance killed, connection
 * cut) is retried, on the next instance; returns the seqs the service acknowledged.
 */
export async function publishClosedLoop(input: {
  readonly events: readonly BenchEvent[];
  readonly batchSize: number;
  readonly window: number;
  readonly receiver: IpcChild;
  readonly pick: () => string;
  readonly onRetry?: (error: Error) => void;
  /** Called after each accepted batch with the instance that took it. */
  readonly afterPublish?: (base: string) => Promise<void>;
}): Promise<{ acknowledged: Set<number>; retriedBatches: number }> {
  const acknowledged = new Set<number>();
  let retriedBatches = 0;
  for (let i = 0; i < input.events.length; i += input.batchSize) {
    const batch = input.events.slice(i, i + input.batchSize);
    for (;;) {
      const { uniqueEvents } = await input.receiver.call<ReceiverStats>('stats');
      if (acknowledged.size - uniqueEvents <= input.window) break;
      await sleep(50);
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const base = input.pick();
        await postBatch(base, batch);
        await input.afterPublish?.(base);
        break;
      } catch (error) {
        if (attempt === 1) retriedBatches++;
        input.onRetry?.(error as Error);
        if (attempt >= 40) throw error;
        await sleep(250);
      }
    }
    for (const event of batch) acknowledged.add(event.payload.seq);
  }
  return { acknowledged, retriedBatches };
}

export type AttemptsByEvent = Map<string, ReceivedAttempt[]>;

export async function receivedAttempts(receiver: IpcChild): Promise<AttemptsByEvent> {
  return new Map(await receiver.call<[string, ReceivedAttempt[]][]>('attempts'));
}

/** Seqs of acknowledged events that never reached the receiver. */
export function missingSeqs(acknowledged: ReadonlySet<number>, attempts: AttemptsByEvent): number[] {
  const seen = new Set<number>();
  for (const list of attempts.values()) for (const attempt of list) if (attempt.seq !== null) seen.add(attempt.seq);
  return [...acknowledged].filter((seq) => !seen.has(seq));
}

/**
 * Waits until every acknowledged seq was received at least once with a 2xx and every stored delivery is
 * DELIVERED (an attempt whose record was lost is sent again once its lease expires), or `timeoutMs` passes.
 */
export async function waitForAllDelivered(run: FaultRun, acknowledged: ReadonlySet<number>, timeoutMs: number): Promise<AttemptsByEvent> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const attempts = await receivedAttempts(run.receiver);
    const delivered = new Set<number>();
    for (const list of attempts.values())
      for (const attempt of list) if (attempt.behaviour === 'ok' && attempt.seq !== null) delivered.add(attempt.seq);
    const missing = [...acknowledged].filter((seq) => !delivered.has(seq)).length;
    const settled = missing === 0 && (await deliveryRows(run.database)).every((row) => row.status === 'DELIVERED');
    if (settled || Date.now() > deadline) return attempts;
    await sleep(1000);
  }
}

export interface DeliveryRow {
  readonly eventId: string;
  readonly status: string;
  readonly attemptCount: number;
  readonly nextAttemptAt: number | null;
  /** The lease token of the claim that holds the delivery, if any. */
  readonly lockedBy: string | null;
}

/** The rows `sql` reads from the run's database, on a connection of its own. */
export async function queryRows<T>(database: BenchDatabase, sql: string): Promise<T[]> {
  const connection = await createConnection({ uri: database.url! });
  try {
    const [rows] = await connection.query(sql);
    return rows as T[];
  } finally {
    await connection.end();
  }
}

/** The deliveries as stored, read from the library's webhook_deliveries table. */
export async function deliveryRows(database: BenchDatabase): Promise<DeliveryRow[]> {
  type Row = { event_id: string; status: string; attempt_count: number; next_attempt_at: string | null; locked_by: string | null };
  const rows = await queryRows<Row>(database, 'SELECT event_id, status, attempt_count, next_attempt_at, locked_by FROM webhook_deliveries');
  return rows.map((row) => ({
    eventId: row.event_id,
    status: row.status,
    attemptCount: Number(row.attempt_count),
    nextAttemptAt: row.next_attempt_at === null ? null : Number(row.next_attempt_at),
    lockedBy: row.locked_by,
  }));
}

/** Event ids received more than once, and how many extra requests they cost. */
export function duplicatesOf(attempts: AttemptsByEvent): number {
  let extra = 0;
  for (const list of attempts.values()) extra += list.length - 1;
  return extra;
}

/** What every crash scenario demands, as counts; each failure is also added to the run's problems. */
export interface AllDelivered {
  readonly deliveryRows: number;
  readonly lost: number;
  readonly notDelivered: number;
  readonly badSignatures: number;
}

/** Every acknowledged event arrived, every stored delivery is DELIVERED, every signature verified. */
export async function checkAllDelivered(
  run: FaultRun,
  acknowledged: ReadonlySet<number>,
  attempts: AttemptsByEvent,
): Promise<AllDelivered> {
  const lost = missingSeqs(acknowledged, attempts);
  const rows = await deliveryRows(run.database);
  const notDelivered = rows.filter((row) => row.status !== 'DELIVERED').length;
  const badSignatures = [...attempts.values()].flat().filter((attempt) => !attempt.validSignature).length;
  if (lost.length > 0) run.problems.push(`${lost.length} acknowledged events never delivered (e.g. seq ${lost.slice(0, 5).join(', ')})`);
  if (notDelivered > 0) run.problems.push(`${notDelivered} deliveries not DELIVERED in the database`);
  if (badSignatures > 0) run.problems.push(`${badSignatures} bad signatures`);
  return { deliveryRows: rows.length, lost: lost.length, notDelivered, badSignatures };
}
