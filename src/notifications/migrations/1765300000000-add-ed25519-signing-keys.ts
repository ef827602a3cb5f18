import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const TABLE = 'webhook_signing_keys';
const COLUMNS = [
  ['id', 'integer NOT NULL PRIMARY KEY AUTO_INCREMENT'],
  ['preference_id', 'integer NOT NULL'],
  ['key_id', 'varchar(32) NOT NULL'],
  ['ciphertext', 'varchar(512) NOT NULL'],
  ['public_key', 'varchar(64) NOT NULL'],
  ['previous_key_id', 'varchar(32) NULL'],
  ['previous_ciphertext', 'varchar(512) NULL'],
  ['previous_public_key', 'varchar(64) NULL'],
  ['previous_until', 'bigint NULL'],
] as const;

/**
 * Standard Webhooks' asymmetric signatures (`v1a`, Ed25519), opt-in per webhook: which schemes sign a webhook's
 * deliveries (`notification_preferences.signature_schemes`, `hmac` for every existing row, so nothing changes for them),
 * and each webhook's key pair (`webhook_signing_keys`: the private key sealed like the signing secret, the public key in
 * clear, and a rotation's previous pair while its overlap runs). The column is added in place on SQLite (see
 * 1764000000000 for why SQLite must not rebuild `notification_preferences`).
 */
export class AddEd25519SigningKeys1765300000000 implements MigrationInterface {
  name = 'AddEd25519SigningKeys1765300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    const q = (name: string) => (mysql ? `\`${name}\`` : `"${name}"`);
    await queryRunner.query(
      `ALTER TABLE ${q('notification_preferences')} ADD COLUMN ${q('signature_schemes')} varchar(32) NOT NULL DEFAULT 'hmac'`,
    );
    const columns = COLUMNS.map(
      ([name, definition]) => `${q(name)} ${mysql ? definition : definition.replace(' AUTO_INCREMENT', ' AUTOINCREMENT')}`,
    );
    await queryRunner.query(
      `CREATE TABLE ${q(TABLE)} (${columns.join(', ')}, ` +
        `CONSTRAINT ${q('uq_webhook_signing_keys_preference')} UNIQUE (${q('preference_id')}), ` +
        `CONSTRAINT ${q('fk_webhook_signing_keys_preference')} FOREIGN KEY (${q('preference_id')}) ` +
        `REFERENCES ${q('notification_preferences')} (${q('id')}) ON DELETE CASCADE)${mysql ? ' ENGINE=InnoDB' : ''}`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    const q = (name: string) => (mysql ? `\`${name}\`` : `"${name}"`);
    await queryRunner.query(`DROP TABLE ${q(TABLE)}`);
    await queryRunner.query(`ALTER TABLE ${q('notification_preferences')} DROP COLUMN ${q('signature_schemes')}`);
  }
}
