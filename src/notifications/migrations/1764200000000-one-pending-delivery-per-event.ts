import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const INDEX = 'ux_webhook_deliveries_pending_event';

/**
 * At most one PENDING delivery per event, enforced by the database: one retry cycle at a time, whichever instance or
 * request starts another (redeliver, recover). SQLite takes a partial unique index; MySQL/MariaDB have none, so a
 * stored generated column holds the event id while the delivery is PENDING (NULL otherwise, and NULLs never collide).
 * Cycles that already ran side by side keep their oldest delivery; the others end CANCELLED, saying why.
 *
 * Also `webhook_events.was_delivered`: retention sets it when it purges a DELIVERED delivery of an event that keeps
 * older ones, so recover never sends an event again that was delivered once.
 */
export class OnePendingDeliveryPerEvent1764200000000 implements MigrationInterface {
  name = 'OnePendingDeliveryPerEvent1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    await queryRunner.query(
      "UPDATE webhook_deliveries SET status = 'CANCELLED', next_attempt_at = NULL, locked_by = NULL, locked_until = NULL, " +
        "last_error = 'another delivery of this event was already PENDING' WHERE id IN (SELECT id FROM (" +
        'SELECT later.id FROM webhook_deliveries later INNER JOIN webhook_deliveries earlier ' +
        "ON earlier.event_id = later.event_id AND earlier.status = 'PENDING' AND earlier.id < later.id " +
        "WHERE later.status = 'PENDING') superseded)",
    );
    if (mysql) {
      await queryRunner.query(
        "ALTER TABLE `webhook_deliveries` ADD COLUMN `pending_event_id` varchar(36) GENERATED ALWAYS AS (CASE WHEN `status` = 'PENDING' THEN `event_id` END) STORED, " +
          `ADD UNIQUE INDEX \`${INDEX}\` (\`pending_event_id\`)`,
      );
      await queryRunner.query('ALTER TABLE `webhook_events` ADD COLUMN `was_delivered` tinyint NOT NULL DEFAULT 0');
    } else {
      await queryRunner.query(`CREATE UNIQUE INDEX "${INDEX}" ON "webhook_deliveries" ("event_id") WHERE "status" = 'PENDING'`);
      await queryRunner.query('ALTER TABLE "webhook_events" ADD COLUMN "was_delivered" boolean NOT NULL DEFAULT (0)');
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (isMySql(queryRunner.connection)) {
      await queryRunner.query('ALTER TABLE `webhook_events` DROP COLUMN `was_delivered`');
      await queryRunner.query(`ALTER TABLE \`webhook_deliveries\` DROP INDEX \`${INDEX}\`, DROP COLUMN \`pending_event_id\``);
    } else {
      await queryRunner.query('ALTER TABLE "webhook_events" DROP COLUMN "was_delivered"');
      await queryRunner.query(`DROP INDEX "${INDEX}"`);
    }
  }
}
