import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const INDEXES = [
  { name: 'ix_webhook_deliveries_user_status', columns: ['user_id', 'status', 'id'] },
  { name: 'ix_webhook_deliveries_user_type', columns: ['user_id', 'type', 'id'] },
];

/**
 * The delivery log's filters: a user's deliveries of one status, or of one type, newest first, each read from its own
 * index range instead of walking the user's whole range (`ix_webhook_deliveries_user`) to filter it. Plain SQL, the
 * same on both dialects but `DROP INDEX`: TypeORM's table reader wants its metadata table on MySQL once a generated
 * column exists (see 1765100000000).
 */
export class AddDeliveryLogFilterIndexes1765200000000 implements MigrationInterface {
  name = 'AddDeliveryLogFilterIndexes1765200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    const q = (name: string) => `${quote}${name}${quote}`;
    for (const { name, columns } of INDEXES) {
      await queryRunner.query(`CREATE INDEX ${q(name)} ON ${q('webhook_deliveries')} (${columns.map(q).join(', ')})`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    for (const { name } of [...INDEXES].reverse()) {
      await queryRunner.query(mysql ? `DROP INDEX \`${name}\` ON \`webhook_deliveries\`` : `DROP INDEX "${name}"`);
    }
  }
}
