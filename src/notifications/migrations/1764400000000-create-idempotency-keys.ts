import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const TABLE = 'webhook_idempotency_keys';
const CREATED_INDEX = 'ix_webhook_idempotency_keys_created_at';

/**
 * Idempotent publish (see `WebhookIdempotencyKey`): one row per producer scope and `Idempotency-Key`, written in the
 * publish's own transaction. The primary key is what makes a retry safe on any instance: a second insert of the same
 * key fails (or, on MySQL/MariaDB, waits for the first transaction and then fails). Keys are compared byte for byte:
 * `ascii_bin` on MySQL/MariaDB (whose default collations ignore case), SQLite's default BINARY collation elsewhere.
 */
export class CreateIdempotencyKeys1764400000000 implements MigrationInterface {
  name = 'CreateIdempotencyKeys1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isMySql(queryRunner.connection)) {
      await queryRunner.query(
        `CREATE TABLE \`${TABLE}\` (` +
          '`scope` varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, ' +
          '`idempotency_key` varchar(255) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, ' +
          '`request_hash` char(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, ' +
          '`event_ids` text NOT NULL, ' +
          '`queued_deliveries` int NOT NULL, ' +
          '`created_at` bigint NOT NULL, ' +
          `PRIMARY KEY (\`scope\`, \`idempotency_key\`), INDEX \`${CREATED_INDEX}\` (\`created_at\`)) ENGINE=InnoDB`,
      );
    } else {
      await queryRunner.query(
        `CREATE TABLE "${TABLE}" ("scope" varchar(64) NOT NULL, "idempotency_key" varchar(255) NOT NULL, ` +
          '"request_hash" varchar(64) NOT NULL, "event_ids" text NOT NULL, "queued_deliveries" integer NOT NULL, ' +
          '"created_at" bigint NOT NULL, PRIMARY KEY ("scope", "idempotency_key"))',
      );
      await queryRunner.query(`CREATE INDEX "${CREATED_INDEX}" ON "${TABLE}" ("created_at")`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(isMySql(queryRunner.connection) ? `DROP TABLE \`${TABLE}\`` : `DROP TABLE "${TABLE}"`);
  }
}
