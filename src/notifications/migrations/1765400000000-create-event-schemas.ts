import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const TABLE = 'webhook_event_schemas';

/**
 * The published payload schemas (see `PublishedEventSchema`), one row per event type and version, so a start can tell
 * a compatible schema change from one that needs a new version. MEDIUMTEXT on MySQL/MariaDB: a schema may outgrow TEXT's
 * 64 KiB.
 */
export class CreateEventSchemas1765400000000 implements MigrationInterface {
  name = 'CreateEventSchemas1765400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (isMySql(queryRunner.connection)) {
      await queryRunner.query(
        `CREATE TABLE \`${TABLE}\` (` +
          '`event_type` varchar(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL, ' +
          '`version` int NOT NULL, ' +
          '`schema` mediumtext NOT NULL, ' +
          '`published_at` bigint NOT NULL, ' +
          '`updated_at` bigint NOT NULL, ' +
          'PRIMARY KEY (`event_type`, `version`)) ENGINE=InnoDB',
      );
    } else {
      await queryRunner.query(
        `CREATE TABLE "${TABLE}" ("event_type" varchar(64) NOT NULL, "version" integer NOT NULL, "schema" text NOT NULL, ` +
          '"published_at" bigint NOT NULL, "updated_at" bigint NOT NULL, PRIMARY KEY ("event_type", "version"))',
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(isMySql(queryRunner.connection) ? `DROP TABLE \`${TABLE}\`` : `DROP TABLE "${TABLE}"`);
  }
}
