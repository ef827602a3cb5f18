import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const TABLE = 'webhook_endpoint_slots';
const COLUMNS = [
  ['endpoint', 'varchar(300) NOT NULL'],
  ['slot', 'integer NOT NULL'],
  ['holder', 'varchar(36) NULL'],
  ['held_until', 'bigint NOT NULL DEFAULT 0'],
] as const;

/** The per-endpoint cap across instances (see `WebhookEndpointSlot`): a row per request slot of an endpoint. */
export class CreateEndpointSlots1764800000000 implements MigrationInterface {
  name = 'CreateEndpointSlots1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    const q = (name: string) => (mysql ? `\`${name}\`` : `"${name}"`);
    const columns = COLUMNS.map(([name, definition]) => `${q(name)} ${definition}`).join(', ');
    await queryRunner.query(
      `CREATE TABLE ${q(TABLE)} (${columns}, PRIMARY KEY (${q('endpoint')}, ${q('slot')}))${mysql ? ' ENGINE=InnoDB' : ''}`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE ${isMySql(queryRunner.connection) ? `\`${TABLE}\`` : `"${TABLE}"`}`);
  }
}
