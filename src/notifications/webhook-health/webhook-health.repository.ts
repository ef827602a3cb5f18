import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import type { EventType } from '../catalog/event-catalog';
import { isMySql } from '../common/database/is-mysql';
import { shortTransaction } from '../common/database/short-transaction';
import { webhookKey } from '../preferences/webhook-key';
import { type HealthFacts, NO_HEALTH_FACTS } from './health-transitions';
import { WebhookHealth } from './webhook-health.entity';

export interface HealthKey {
  readonly userId: number;
  readonly type: EventType;
}

/** The fact columns, in the order of {@link HealthFacts}' fields. */
const FACT_COLUMNS: readonly (readonly [column: string, field: keyof HealthFacts])[] = [
  ['failed_attempts_in_row', 'failedAttemptsInRow'],
  ['failing_since', 'failingSince'],
  ['last_attempt_at', 'lastAttemptAt'],
  ['last_outcome', 'lastOutcome'],
  ['last_status_code', 'lastStatusCode'],
  ['last_error', 'lastError'],
  ['last_success_at', 'lastSuccessAt'],
  ['circuit_open_until', 'circuitOpenUntil'],
  ['disabled_at', 'disabledAt'],
];
const COLUMNS = ['user_id', 'type', ...FACT_COLUMNS.map(([column]) => column), 'updated_at'];
/** Rows known to exist, remembered so that a batch over them skips the insert of missing rows (rows are never deleted). */
const KNOWN_ROWS_LIMIT = 50_000;

type HealthRow = Record<string, string | number | null>;

/**
 * The health rows (`webhook_health`): a batch's read-modify-write under row locks, and a user's rows for the settings
 * API. The batch's statements are plain SQL: a busy worker writes one every few hundred attempts that change something.
 */
@Injectable()
export class WebhookHealthRepository {
  private readonly knownRows = new Set<string>();

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Reads the rows of `keys` locked (MySQL/MariaDB: `FOR UPDATE`, in key order; SQLite: transactions run one at a time),
   * hands their facts to `update`, and writes what it answers, in one short transaction, so that instances writing the
   * same webhook at once each see the other's result. Missing rows are inserted first (MySQL/MariaDB: in their own
   * statement, so two instances never both create one): a lock needs a row. `update` may run more than once (a deadlock
   * is retried). `read`, when given, runs in the same transaction once the rows are locked, and its answer goes to
   * `update`: what it reads is then at least as new as the rows (a change committed before another instance wrote
   * them is seen).
   */
  async update<T, R = undefined>(
    keys: readonly HealthKey[],
    now: number,
    update: (facts: ReadonlyMap<string, HealthFacts>, read: R) => { writes: Map<string, HealthFacts>; result: T },
    read?: (manager: EntityManager) => Promise<R>,
  ): Promise<T> {
    const sorted = [...keys].sort((a, b) => a.userId - b.userId || (a.type < b.type ? -1 : a.type > b.type ? 1 : 0));
    const mysql = isMySql(this.dataSource);
    const missing = sorted.filter((key) => !this.knownRows.has(webhookKey(key.userId, key.type)));
    if (mysql) await this.insertMissing(this.dataSource.manager, missing, now);
    const result = await shortTransaction(this.dataSource, async (manager) => {
      if (!mysql) await this.insertMissing(manager, missing, now);
      const pairs = sorted.map(() => '(?, ?)').join(', ');
      const rows = await manager.query<HealthRow[]>(
        `SELECT ${COLUMNS.join(', ')} FROM webhook_health WHERE (user_id, type) IN (${pairs}) ORDER BY user_id, type${mysql ? ' FOR UPDATE' : ''}`,
        sorted.flatMap((key) => [key.userId, key.type]),
      );
      const facts = new Map<string, HealthFacts>(sorted.map((key) => [webhookKey(key.userId, key.type), NO_HEALTH_FACTS]));
      for (const row of rows) facts.set(webhookKey(Number(row.user_id), row.type as EventType), factsOf(row));
      const { writes, result } = update(facts, (read ? await read(manager) : undefined) as R);
      if (writes.size > 0) await this.write(manager, writes, sorted, now, mysql);
      return result;
    });
    for (const key of missing) this.remember(webhookKey(key.userId, key.type));
    return result;
  }

  /** A user's health rows. */
  forUser(userId: number): Promise<WebhookHealth[]> {
    return this.dataSource.manager.findBy(WebhookHealth, { userId });
  }

  private async insertMissing(manager: EntityManager, keys: readonly HealthKey[], now: number): Promise<void> {
    if (keys.length === 0) return;
    const values = keys.map(({ userId, type }) => ({ userId, type, ...NO_HEALTH_FACTS, updatedAt: now }));
    await manager.createQueryBuilder().insert().into(WebhookHealth).values(values).orIgnore().execute();
  }

  private async write(
    manager: EntityManager,
    writes: ReadonlyMap<string, HealthFacts>,
    keys: readonly HealthKey[],
    now: number,
    mysql: boolean,
  ): Promise<void> {
    const byKey = new Map(keys.map((key) => [webhookKey(key.userId, key.type), key]));
    const rows = [...writes].map(([key, facts]) => {
      const { userId, type } = byKey.get(key)!;
      return [userId, type, ...FACT_COLUMNS.map(([, field]) => facts[field]), now];
    });
    const placeholders = `(${COLUMNS.map(() => '?').join(', ')})`;
    const updated = FACT_COLUMNS.map(([column]) => column).concat('updated_at');
    const onConflict = mysql
      ? `ON DUPLICATE KEY UPDATE ${updated.map((column) => `${column} = VALUES(${column})`).join(', ')}`
      : `ON CONFLICT (user_id, type) DO UPDATE SET ${updated.map((column) => `${column} = excluded.${column}`).join(', ')}`;
    await manager.query(
      `INSERT INTO webhook_health (${COLUMNS.join(', ')}) VALUES ${rows.map(() => placeholders).join(', ')} ${onConflict}`,
      rows.flat(),
    );
  }

  private remember(key: string): void {
    if (this.knownRows.size >= KNOWN_ROWS_LIMIT) this.knownRows.clear();
    this.knownRows.add(key);
  }
}

/** A row as the driver returns it (BIGINT and some integers as strings from mysql2). */
function factsOf(row: HealthRow): HealthFacts {
  const number = (value: string | number | null) => (value === null ? null : Number(value));
  return {
    failedAttemptsInRow: Number(row.failed_attempts_in_row),
    failingSince: number(row.failing_since),
    lastAttemptAt: number(row.last_attempt_at),
    lastOutcome: row.last_outcome as string | null,
    lastStatusCode: number(row.last_status_code),
    lastError: row.last_error as string | null,
    lastSuccessAt: number(row.last_success_at),
    circuitOpenUntil: number(row.circuit_open_until),
    disabledAt: number(row.disabled_at),
  };
}
