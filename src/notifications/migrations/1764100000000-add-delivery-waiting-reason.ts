import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

/**
 * Why a pending delivery waits beyond its schedule (its endpoint's circuit is open), for the delivery log.
 * Added in place on both dialects (see 1764000000000 for why SQLite must not rebuild tables).
 */
export class AddDeliveryWaitingReason1764100000000 implements MigrationInterface {
  name = 'AddDeliveryWaitingReason1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    await queryRunner.query(`ALTER TABLE ${quote}webhook_deliveries${quote} ADD COLUMN ${quote}waiting_reason${quote} varchar(255) NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    await queryRunner.query(`ALTER TABLE ${quote}webhook_deliveries${quote} DROP COLUMN ${quote}waiting_reason${quote}`);
  }
}
