import { type MigrationInterface, type QueryRunner, Table } from 'typeorm';

/** One half-open probe per endpoint across instances (see `WebhookEndpointProbe`). */
export class CreateEndpointProbes1764300000000 implements MigrationInterface {
  name = 'CreateEndpointProbes1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'webhook_endpoint_probes',
        columns: [
          { name: 'endpoint', type: 'varchar', length: '300', isPrimary: true },
          { name: 'next_probe_at', type: 'bigint' },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('webhook_endpoint_probes');
  }
}
