import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const COLUMNS = [
  ['traceparent', 'varchar(55) NULL'],
  ['tracestate', 'varchar(512) NULL'],
] as const;

/**
 * The W3C trace context an event was published with (`WebhookEvent.traceparent`, `tracestate`): every attempt of its
 * deliveries, redeliveries and recoveries included, joins that trace. Added in place on both dialects (see
 * 1764000000000 for why SQLite must not rebuild tables).
 */
export class AddEventTraceContext1764600000000 implements MigrationInterface {
  name = 'AddEventTraceContext1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    for (const [name, definition] of COLUMNS)
      await queryRunner.query(`ALTER TABLE ${quote}webhook_events${quote} ADD COLUMN ${quote}${name}${quote} ${definition}`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    for (const [name] of [...COLUMNS].reverse())
      await queryRunner.query(`ALTER TABLE ${quote}webhook_events${quote} DROP COLUMN ${quote}${name}${quote}`);
  }
}
