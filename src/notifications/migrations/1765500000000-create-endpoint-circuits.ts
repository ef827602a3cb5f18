import type { MigrationInterface, QueryRunner } from 'typeorm';
import { isMySql } from '../common/database/is-mysql';

const BY_PARTITION = 'ix_webhook_endpoint_circuits_partition';

/**
 * What moves with a partition (`WebhookEndpointCircuit`): each endpoint's circuit as its last owner kept it, so the next
 * owner of the user's partition inherits an open circuit (one probe when its cool-down ends) and recent failures,
 * instead of sending to a dead endpoint until its own count opens the circuit again.
 */
export class CreateEndpointCircuits1765500000000 implements MigrationInterface {
  name = 'CreateEndpointCircuits1765500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    const q = (name: string) => (mysql ? `\`${name}\`` : `"${name}"`);
    const columns = [
      ['user_id', 'integer NOT NULL'],
      ['host', 'varchar(255) NOT NULL'],
      ['user_partition', 'smallint NOT NULL'],
      ['failures', 'int NOT NULL'],
      ['open_until', 'bigint NULL'],
      ['cool_down_ms', 'int NOT NULL'],
      ['last_failure_at', 'bigint NOT NULL'],
      ['forget_after', 'bigint NOT NULL'],
    ];
    await queryRunner.query(
      `CREATE TABLE ${q('webhook_endpoint_circuits')} (${columns.map(([name, type]) => `${q(name)} ${type}`).join(', ')}, PRIMARY KEY (${q('user_id')}, ${q('host')}))${mysql ? ' ENGINE=InnoDB' : ''}`,
    );
    await queryRunner.query(`CREATE INDEX ${q(BY_PARTITION)} ON ${q('webhook_endpoint_circuits')} (${q('user_partition')})`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const mysql = isMySql(queryRunner.connection);
    await queryRunner.query(mysql ? 'DROP TABLE `webhook_endpoint_circuits`' : 'DROP TABLE "webhook_endpoint_circuits"');
  }
}
