import { type MigrationInterface, type QueryRunner, TableColumn, TableIndex } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const EVENT_FOREIGN_KEY = 'fk_webhook_deliveries_event';
const COLUMNS = [
  new TableColumn({ name: 'consecutive_failures', type: 'integer', default: 0 }),
  new TableColumn({ name: 'disabled_reason', type: 'varchar', length: '255', isNullable: true }),
];

/**
 * Auto-disable state on preferences, and the indexes the retention job walks: terminal deliveries by
 * age, and deliveries by event (to find events left without any).
 *
 * On SQLite, TypeORM adds and drops a column by rebuilding the table; unless foreign keys are off
 * (they cannot be switched off inside a transaction, e.g. during a revert) dropping the old
 * `notification_preferences` would cascade-delete every signing secret. SQLite's own
 * `ALTER TABLE … ADD/DROP COLUMN` changes the table in place, so it is used there instead.
 */
export class AddAutoDisableAndRetentionIndexes1764000000000 implements MigrationInterface {
  name = 'AddAutoDisableAndRetentionIndexes1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isMySql(queryRunner.connection)) {
      await queryRunner.addColumns('notification_preferences', COLUMNS);
    } else {
      await queryRunner.query('ALTER TABLE "notification_preferences" ADD COLUMN "consecutive_failures" integer NOT NULL DEFAULT (0)');
      await queryRunner.query('ALTER TABLE "notification_preferences" ADD COLUMN "disabled_reason" varchar(255)');
    }
    await queryRunner.createIndex(
      'webhook_deliveries',
      new TableIndex({ name: 'ix_webhook_deliveries_retention', columnNames: ['status', 'updated_at'] }),
    );
    await queryRunner.createIndex('webhook_deliveries', new TableIndex({ name: 'ix_webhook_deliveries_event', columnNames: ['event_id'] }));
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (isMySql(queryRunner.connection)) {
      // MySQL keeps an index for the foreign key on event_id: drop the key with it, then recreate it (with its own index).
      const eventKey = (await queryRunner.getTable('webhook_deliveries'))?.foreignKeys.find((key) => key.name === EVENT_FOREIGN_KEY);
      if (eventKey) await queryRunner.dropForeignKey('webhook_deliveries', eventKey);
      await queryRunner.dropIndex('webhook_deliveries', 'ix_webhook_deliveries_event');
      if (eventKey) await queryRunner.createForeignKey('webhook_deliveries', eventKey);
    } else {
      await queryRunner.dropIndex('webhook_deliveries', 'ix_webhook_deliveries_event');
    }
    await queryRunner.dropIndex('webhook_deliveries', 'ix_webhook_deliveries_retention');
    if (isMySql(queryRunner.connection)) {
      for (const column of [...COLUMNS].reverse()) await queryRunner.dropColumn('notification_preferences', column.name);
    } else {
      await queryRunner.query('ALTER TABLE "notification_preferences" DROP COLUMN "disabled_reason"');
      await queryRunner.query('ALTER TABLE "notification_preferences" DROP COLUMN "consecutive_failures"');
    }
  }
}
