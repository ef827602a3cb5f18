import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const COLUMNS = [
  ['previous_key_id', 'varchar(32) NULL'],
  ['previous_ciphertext', 'varchar(512) NULL'],
  ['previous_until', 'bigint NULL'],
] as const;

/**
 * A rotation's overlap (`WebhookSigningSecret.previous*`): the secret before it still signs `webhook-signature` for a
 * while. Added in place on both dialects (see 1764000000000 for why SQLite must not rebuild tables).
 */
export class AddRotationOverlap1764500000000 implements MigrationInterface {
  name = 'AddRotationOverlap1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    for (const [name, definition] of COLUMNS)
      await queryRunner.query(`ALTER TABLE ${quote}webhook_signing_secrets${quote} ADD COLUMN ${quote}${name}${quote} ${definition}`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    for (const [name] of [...COLUMNS].reverse())
      await queryRunner.query(`ALTER TABLE ${quote}webhook_signing_secrets${quote} DROP COLUMN ${quote}${name}${quote}`);
  }
}
