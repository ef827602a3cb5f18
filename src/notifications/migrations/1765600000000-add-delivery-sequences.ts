import { createHash } from 'node:crypto';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const STREAMS = 'webhook_streams';
const BY_STREAM = 'ix_webhook_deliveries_stream';
const STREAM_COLUMNS = [
  ['id', 'integer NOT NULL PRIMARY KEY AUTO_INCREMENT'],
  ['user_id', 'integer NOT NULL'],
  ['url_hash', 'varchar(64) NOT NULL'],
  ['last_sequence', 'bigint NOT NULL DEFAULT 0'],
  ['ordered', 'boolean NOT NULL DEFAULT 0'],
] as const;

/**
 * Sequence numbers and ordered delivery per (user, webhook URL): a stream per user and URL (`webhook_streams`: the last
 * number given, whether its deliveries go one at a time in order), each webhook's current stream
 * (`notification_preferences.stream_id`), and each delivery's stream and number (`webhook_deliveries.stream_id`,
 * `sequence`; indexed by stream, status and id for the ordered claim). Every existing webhook with a URL gets the stream
 * of its URL (shared by the user's webhooks with that URL), numbered from 1 by the next publish; existing deliveries keep
 * no number. Columns are added in place on SQLite (see 1764000000000 for why it must not rebuild those tables).
 */
export class AddDeliverySequences1765600000000 implements MigrationInterface {
  name = 'AddDeliverySequences1765600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    const q = (name: string) => (mysql ? `\`${name}\`` : `"${name}"`);
    const columns = STREAM_COLUMNS.map(
      ([name, definition]) => `${q(name)} ${mysql ? definition : definition.replace(' AUTO_INCREMENT', ' AUTOINCREMENT')}`,
    );
    await queryRunner.query(
      `CREATE TABLE ${q(STREAMS)} (${columns.join(', ')}, ` +
        `CONSTRAINT ${q('uq_webhook_streams_user_url')} UNIQUE (${q('user_id')}, ${q('url_hash')}))${mysql ? ' ENGINE=InnoDB' : ''}`,
    );
    await queryRunner.query(`ALTER TABLE ${q('notification_preferences')} ADD COLUMN ${q('stream_id')} integer NULL`);
    await queryRunner.query(`ALTER TABLE ${q('webhook_deliveries')} ADD COLUMN ${q('stream_id')} integer NULL`);
    await queryRunner.query(`ALTER TABLE ${q('webhook_deliveries')} ADD COLUMN ${q('sequence')} bigint NULL`);
    await queryRunner.query(
      `CREATE INDEX ${q(BY_STREAM)} ON ${q('webhook_deliveries')} (${['stream_id', 'status', 'id'].map(q).join(', ')})`,
    );
    const webhooks: { id: number | string; user_id: number | string; webhook_url: string }[] = await queryRunner.query(
      `SELECT ${q('id')}, ${q('user_id')}, ${q('webhook_url')} FROM ${q('notification_preferences')} ` +
        `WHERE ${q('channel')} = 'WEBHOOK' AND ${q('webhook_url')} IS NOT NULL`,
    );
    const streams = new Map<string, number>();
    for (const webhook of webhooks) {
      const key = `${Number(webhook.user_id)} ${urlHash(webhook.webhook_url)}`;
      if (!streams.has(key)) {
        await queryRunner.query(`INSERT INTO ${q(STREAMS)} (${q('user_id')}, ${q('url_hash')}) VALUES (?, ?)`, [
          Number(webhook.user_id),
          urlHash(webhook.webhook_url),
        ]);
        const [row]: { id: number | string }[] = await queryRunner.query(
          `SELECT ${q('id')} FROM ${q(STREAMS)} WHERE ${q('user_id')} = ? AND ${q('url_hash')} = ?`,
          [Number(webhook.user_id), urlHash(webhook.webhook_url)],
        );
        streams.set(key, Number(row.id));
      }
      await queryRunner.query(`UPDATE ${q('notification_preferences')} SET ${q('stream_id')} = ? WHERE ${q('id')} = ?`, [
        streams.get(key),
        Number(webhook.id),
      ]);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    const q = (name: string) => (mysql ? `\`${name}\`` : `"${name}"`);
    await queryRunner.query(mysql ? `DROP INDEX ${q(BY_STREAM)} ON ${q('webhook_deliveries')}` : `DROP INDEX ${q(BY_STREAM)}`);
    await queryRunner.query(`ALTER TABLE ${q('webhook_deliveries')} DROP COLUMN ${q('sequence')}`);
    await queryRunner.query(`ALTER TABLE ${q('webhook_deliveries')} DROP COLUMN ${q('stream_id')}`);
    await queryRunner.query(`ALTER TABLE ${q('notification_preferences')} DROP COLUMN ${q('stream_id')}`);
    await queryRunner.query(`DROP TABLE ${q(STREAMS)}`);
  }
}

/** The stream key of a URL as stored (a URL of up to 2048 characters is too long for a unique index on MySQL). */
function urlHash(url: string): string {
  return createHash('sha256').update(url).digest('hex');
}
