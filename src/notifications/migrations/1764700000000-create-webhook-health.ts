import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const TABLE = 'webhook_health';
const COLUMNS = [
  ['user_id', 'integer NOT NULL'],
  ['type', 'varchar(64) NOT NULL'],
  ['failed_attempts_in_row', 'integer NOT NULL DEFAULT 0'],
  ['failing_since', 'bigint NULL'],
  ['last_attempt_at', 'bigint NULL'],
  ['last_outcome', 'varchar(32) NULL'],
  ['last_status_code', 'integer NULL'],
  ['last_error', 'varchar(255) NULL'],
  ['last_success_at', 'bigint NULL'],
  ['circuit_open_until', 'bigint NULL'],
  ['disabled_at', 'bigint NULL'],
  ['updated_at', 'bigint NOT NULL'],
] as const;

/** Endpoint health (see `WebhookHealth`): one row per webhook (user and event type), written in batches off the delivery path. */
export class CreateWebhookHealth1764700000000 implements MigrationInterface {
  name = 'CreateWebhookHealth1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    const q = (name: string) => (mysql ? `\`${name}\`` : `"${name}"`);
    const columns = COLUMNS.map(([name, definition]) => `${q(name)} ${definition}`).join(', ');
    await queryRunner.query(
      `CREATE TABLE ${q(TABLE)} (${columns}, PRIMARY KEY (${q('user_id')}, ${q('type')}))${mysql ? ' ENGINE=InnoDB' : ''}`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE ${isMySql(queryRunner.connection) ? `\`${TABLE}\`` : `"${TABLE}"`}`);
  }
}
