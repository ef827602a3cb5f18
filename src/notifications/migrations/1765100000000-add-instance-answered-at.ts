import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

/**
 * When a receiver last answered each delivering instance (`WebhookDeliveryInstance.answeredAt`), written with its
 * heartbeat: an instance that reaches no receiver while another does stands down (`EgressWatch`). Added in place on both
 * dialects (see 1764000000000).
 */
export class AddInstanceAnsweredAt1765100000000 implements MigrationInterface {
  name = 'AddInstanceAnsweredAt1765100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    await queryRunner.query(`ALTER TABLE ${quote}webhook_delivery_instances${quote} ADD COLUMN ${quote}answered_at${quote} bigint NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    await queryRunner.query(`ALTER TABLE ${quote}webhook_delivery_instances${quote} DROP COLUMN ${quote}answered_at${quote}`);
  }
}
