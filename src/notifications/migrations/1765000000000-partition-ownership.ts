import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

/** The partitions users hash into (`PARTITION_COUNT` when this migration was written; a change needs a migration of its own). */
const PARTITIONS = 256;
const DUE_BY_PARTITION = 'ix_webhook_deliveries_partition_due';

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
 * The column is added in place on both dialects (see 1764000000000 for why SQLite must not rebuild tables). SQLite
 * adds a NOT NULL column only with a default, so there it defaults to 0: one process delivers from SQLite and claims
 * every partition, whatever a row says. MySQL/MariaDB get no default: an insert that forgets the partition fails.
 */
export class PartitionOwnership1765000000000 implements MigrationInterface {
  name = 'PartitionOwnership1765000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    const q = quoting(mysql);
    await queryRunner.query(
      `ALTER TABLE ${q('webhook_deliveries')} ADD COLUMN ${q('user_partition')} smallint NOT NULL${mysql ? '' : ' DEFAULT (0)'}`,
    );
    // As partitionOf: non-negative for any user id.
    await queryRunner.query(
      `UPDATE ${q('webhook_deliveries')} SET ${q('user_partition')} = ((${q('user_id')} % ${PARTITIONS}) + ${PARTITIONS}) % ${PARTITIONS}`,
    );
    await queryRunner.query(
      `CREATE INDEX ${q(DUE_BY_PARTITION)} ON ${q('webhook_deliveries')} (${['status', 'user_partition', 'next_attempt_at'].map(q).join(', ')})`,
    );
    for (const [table, definition] of Object.entries(NEW_TABLES)) await createTable(queryRunner, table, definition);
    const rows = Array.from({ length: PARTITIONS }, (_, partition) => `(${partition}, NULL, 0, 0)`);
    await queryRunner.query(
      `INSERT INTO ${q('webhook_partitions')} (${['user_partition', 'holder', 'lease_until', 'epoch'].map(q).join(', ')}) VALUES ${rows.join(', ')}`,
    );
    for (const table of Object.keys(REPLACED_TABLES)) await queryRunner.query(`DROP TABLE ${q(table)}`);
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

function quoting(mysql: boolean): (name: string) => string {
  return (name) => (mysql ? `\`${name}\`` : `"${name}"`);
}

async function createTable(queryRunner: QueryRunner, table: string, { columns, primaryKey }: TableDefinition): Promise<void> {
  const mysql = isMySql(queryRunner.connection);
  const q = quoting(mysql);
  const definitions = columns.map(([name, definition]) => `${q(name)} ${definition}`).join(', ');
  await queryRunner.query(
    `CREATE TABLE ${q(table)} (${definitions}, PRIMARY KEY (${primaryKey.map(q).join(', ')}))${mysql ? ' ENGINE=InnoDB' : ''}`,
  );
}
