import { Logger } from '@nestjs/common';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

/** The partitions users hash into (`PARTITION_COUNT` when this migration was written; a change needs a migration of its own). */
const PARTITIONS = 256;
const DUE_BY_PARTITION = 'ix_webhook_deliveries_partition_due';
/** The holder of every partition until the last slot held by an instance of the previous version ends. */
export const PREVIOUS_VERSION = 'instances of the previous version';
/** Where the slot table goes while its last holds are read: out of reach of the previous version's instances. */
const RETIRED_SLOTS = 'webhook_endpoint_slots_retired';

/** The per-endpoint tables this migration replaces, as 1764300000000, 1764800000000 and 1764900000000 made them (for `down`). */
const REPLACED_TABLES = {
  webhook_endpoint_probes: {
    columns: [
      ['endpoint', 'varchar(300) NOT NULL'],
      ['next_probe_at', 'bigint NOT NULL'],
      ['holder', 'varchar(36) NULL'],
    ],
    primaryKey: ['endpoint'],
  },
  webhook_endpoint_slots: {
    columns: [
      ['endpoint', 'varchar(300) NOT NULL'],
      ['slot', 'integer NOT NULL'],
      ['holder', 'varchar(36) NULL'],
      ['held_until', 'bigint NOT NULL DEFAULT 0'],
    ],
    primaryKey: ['endpoint', 'slot'],
  },
  webhook_endpoint_failures: {
    columns: [
      ['endpoint', 'varchar(300) NOT NULL'],
      ['failures', 'integer NOT NULL'],
    ],
    primaryKey: ['endpoint'],
  },
} as const;

const NEW_TABLES = {
  webhook_partitions: {
    columns: [
      ['user_partition', 'smallint NOT NULL'],
      ['holder', 'varchar(64) NULL'],
      ['lease_until', 'bigint NOT NULL DEFAULT 0'],
      ['epoch', 'int NOT NULL DEFAULT 0'],
    ],
    primaryKey: ['user_partition'],
  },
  webhook_delivery_instances: {
    columns: [
      ['holder', 'varchar(64) NOT NULL'],
      ['alive_until', 'bigint NOT NULL'],
    ],
    primaryKey: ['holder'],
  },
} as const;

type TableDefinition = { readonly columns: readonly (readonly [string, string])[]; readonly primaryKey: readonly string[] };

/**
 * One owner per partition of users instead of per-endpoint rows shared by every instance: each delivery stores its
 * user's partition (`user_id` mod 256, as `partitionOf` computes it) with an index for claims by partition;
 * `webhook_partitions` holds each partition's lease (all 256 rows made here, free), `webhook_delivery_instances` the
 * instances alive. The request slots, probes and failure counts (`webhook_endpoint_slots`, `_probes`, `_failures`)
 * become the owner's memory: their tables go.
 *
 * The column is added in place on both dialects (see 1764000000000 for why SQLite must not rebuild tables). On
 * MySQL/MariaDB it defaults to the user's partition (where the server has expression defaults: MariaDB 10.2, MySQL
 * 8.0.13), so instances of the previous version, which know no such column, still publish while the new one rolls out.
 * SQLite adds a NOT NULL column only with a constant default, so there it is 0: one process delivers from SQLite and
 * claims every partition, whatever a row says.
 *
 * Instances of the previous version may still be delivering as this runs (a rolling deploy). The slot table is first
 * moved out of their reach (one rename): from then on none of them can take a slot, so none starts a request. Those already sent hold slots until at most the latest `held_until`; the partitions are made held
 * by {@link PREVIOUS_VERSION} until then, so no new instance takes one, and so sends to an endpoint, before every
 * request of the old version has ended: the per-endpoint cap holds across the switch.
 */
export class PartitionOwnership1765000000000 implements MigrationInterface {
  name = 'PartitionOwnership1765000000000';

  /** Each step is skipped when done: on MySQL/MariaDB every DDL statement commits alone, so a failed run resumes. */
  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    const q = quoting(mysql);
    // First, before the long statements (whose table locks would make the old version's records fail, and so send its
    // attempts again): no instance of the previous version takes a slot from here on.
    if (await queryRunner.hasTable('webhook_endpoint_slots'))
      await queryRunner.query(`ALTER TABLE ${q('webhook_endpoint_slots')} RENAME TO ${q(RETIRED_SLOTS)}`);
    // As partitionOf: non-negative for any user id.
    const partitionOfUser = `((${q('user_id')} % ${PARTITIONS}) + ${PARTITIONS}) % ${PARTITIONS}`;
    const addColumn = (defaultValue: string) =>
      queryRunner.query(`ALTER TABLE ${q('webhook_deliveries')} ADD COLUMN ${q('user_partition')} smallint NOT NULL${defaultValue}`);
    if (!(await queryRunner.hasColumn('webhook_deliveries', 'user_partition')))
      if (!mysql) await addColumn(' DEFAULT (0)');
      else await addColumn(` DEFAULT (${partitionOfUser})`).catch((error: unknown) => withoutExpressionDefault(error, addColumn));
    await queryRunner.query(`UPDATE ${q('webhook_deliveries')} SET ${q('user_partition')} = ${partitionOfUser}`);
    if (!(await hasIndex(queryRunner, 'webhook_deliveries', DUE_BY_PARTITION)))
      await queryRunner.query(
        `CREATE INDEX ${q(DUE_BY_PARTITION)} ON ${q('webhook_deliveries')} (${['status', 'user_partition', 'next_attempt_at'].map(q).join(', ')})`,
      );
    for (const [table, definition] of Object.entries(NEW_TABLES))
      if (!(await queryRunner.hasTable(table))) await createTable(queryRunner, table, definition);
    // Gone when a previous run got past this (the partitions were made then).
    if (await queryRunner.hasTable(RETIRED_SLOTS)) {
      const [{ until }] = (await queryRunner.query(`SELECT MAX(${q('held_until')}) AS ${q('until')} FROM ${q(RETIRED_SLOTS)}`)) as {
        until: number | string | null;
      }[];
      const heldUntil = Number(until ?? 0);
      const holder = heldUntil > 0 ? `'${PREVIOUS_VERSION}'` : 'NULL';
      const rows = Array.from({ length: PARTITIONS }, (_, partition) => `(${partition}, ${holder}, ${heldUntil}, 0)`);
      await queryRunner.query(`DELETE FROM ${q('webhook_partitions')}`);
      await queryRunner.query(
        `INSERT INTO ${q('webhook_partitions')} (${['user_partition', 'holder', 'lease_until', 'epoch'].map(q).join(', ')}) VALUES ${rows.join(', ')}`,
      );
    }
    // The slot table went as RETIRED_SLOTS; the others by their names.
    for (const table of [RETIRED_SLOTS, ...Object.keys(REPLACED_TABLES).filter((name) => name !== 'webhook_endpoint_slots')])
      await queryRunner.query(`DROP TABLE IF EXISTS ${q(table)}`);
  }

  /** The replaced tables come back empty: the instances of the older version make their rows again as they deliver. */
  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    const q = quoting(mysql);
    for (const [table, definition] of Object.entries(REPLACED_TABLES)) await createTable(queryRunner, table, definition);
    for (const table of Object.keys(NEW_TABLES).reverse()) await queryRunner.query(`DROP TABLE ${q(table)}`);
    if (mysql)
      await queryRunner.query(
        `ALTER TABLE ${q('webhook_deliveries')} DROP INDEX ${q(DUE_BY_PARTITION)}, DROP COLUMN ${q('user_partition')}`,
      );
    else {
      await queryRunner.query(`DROP INDEX ${q(DUE_BY_PARTITION)}`);
      await queryRunner.query(`ALTER TABLE ${q('webhook_deliveries')} DROP COLUMN ${q('user_partition')}`);
    }
  }
}

/** MySQL's errors for syntax it does not know and for a default it does not take: a server without expression defaults. */
const NO_EXPRESSION_DEFAULT = new Set([1064, 1067]);

/**
 * A server without expression defaults (MySQL before 8.0.13) gets the column without one: there instances of the
 * previous version cannot publish until they are replaced. Any other error is the migration's.
 */
async function withoutExpressionDefault(error: unknown, addColumn: (defaultValue: string) => Promise<unknown>): Promise<void> {
  const { errno, driverError } = error as { errno?: number; driverError?: { errno?: number } };
  if (!NO_EXPRESSION_DEFAULT.has(errno ?? driverError?.errno ?? 0)) throw error;
  new Logger('Migrations').warn(
    'This server has no expression defaults (MySQL 8.0.13): webhook_deliveries.user_partition gets none, so instances of the previous version cannot publish until they are replaced',
  );
  await addColumn('');
}

function quoting(mysql: boolean): (name: string) => string {
  return (name) => (mysql ? `\`${name}\`` : `"${name}"`);
}

async function hasIndex(queryRunner: QueryRunner, table: string, index: string): Promise<boolean> {
  const rows = (await queryRunner.query(
    isMySql(queryRunner.connection)
      ? 'SELECT 1 FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ?'
      : "SELECT 1 FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name = ?",
    [table, index],
  )) as unknown[];
  return rows.length > 0;
}

async function createTable(queryRunner: QueryRunner, table: string, { columns, primaryKey }: TableDefinition): Promise<void> {
  const mysql = isMySql(queryRunner.connection);
  const q = quoting(mysql);
  const definitions = columns.map(([name, definition]) => `${q(name)} ${definition}`).join(', ');
  await queryRunner.query(
    `CREATE TABLE ${q(table)} (${definitions}, PRIMARY KEY (${primaryKey.map(q).join(', ')}))${mysql ? ' ENGINE=InnoDB' : ''}`,
  );
}
