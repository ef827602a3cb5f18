import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

/**
 * Who holds an endpoint's running probe (`WebhookEndpointProbe.holder`): a probe's end is stored only by its holder, so a
 * late one never ends a probe another instance took since. Added in place on both dialects (see 1764000000000).
 */
export class AddEndpointProbeHolder1764900000000 implements MigrationInterface {
  name = 'AddEndpointProbeHolder1764900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    await queryRunner.query(`ALTER TABLE ${quote}webhook_endpoint_probes${quote} ADD COLUMN ${quote}holder${quote} varchar(36) NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const quote = isMySql(queryRunner.connection) ? '`' : '"';
    await queryRunner.query(`ALTER TABLE ${quote}webhook_endpoint_probes${quote} DROP COLUMN ${quote}holder${quote}`);
  }
}
