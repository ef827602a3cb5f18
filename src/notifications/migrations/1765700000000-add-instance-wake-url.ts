import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

/**
 * Where each delivering instance can be woken (`WebhookDeliveryInstance.wakeUrl`, `delivery.wakeUrl`), written with its
 * heartbeat: an instance that publishes deliveries of a partition it does not own wakes the owner there, instead of
 * leaving them for the owner's next look (a second later). Added in place on both dialects (see 1764000000000).
 */
export class AddInstanceWakeUrl1765700000000 implements MigrationInterface {
  name = 'AddInstanceWakeUrl1765700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    await queryRunner.query(
      `ALTER TABLE ${quote}webhook_delivery_instances${quote} ADD COLUMN ${quote}wake_url${quote} varchar(2048) NULL`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    await queryRunner.query(`ALTER TABLE ${quote}webhook_delivery_instances${quote} DROP COLUMN ${quote}wake_url${quote}`);
  }
}
