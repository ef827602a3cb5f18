import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const TABLES = {
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

/**
 * The per-endpoint limits across instances: the request slots of each endpoint (see `WebhookEndpointSlot`) and its
 * unreachable attempts in a row, all instances together (see `WebhookEndpointFailures`).
 */
export class CreateEndpointLimits1764800000000 implements MigrationInterface {
  name = 'CreateEndpointLimits1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    const q = (name: string) => (mysql ? `\`${name}\`` : `"${name}"`);
    for (const [table, { columns, primaryKey }] of Object.entries(TABLES)) {
      const definitions = columns.map(([name, definition]) => `${q(name)} ${definition}`).join(', ');
      await queryRunner.query(
        `CREATE TABLE ${q(table)} (${definitions}, PRIMARY KEY (${primaryKey.map(q).join(', ')}))${mysql ? ' ENGINE=InnoDB' : ''}`,
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    for (const table of Object.keys(TABLES).reverse()) await queryRunner.query(`DROP TABLE ${mysql ? `\`${table}\`` : `"${table}"`}`);
  }
}
