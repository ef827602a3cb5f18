import { type MigrationInterface, type QueryRunner, Table } from 'typeorm';

const id = { name: 'id', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' } as const;

export class CreateWebhookDeliveries1763900000000 implements MigrationInterface {
  name = 'CreateWebhookDeliveries1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'webhook_events',
        columns: [
          { name: 'id', type: 'varchar', length: '36', isPrimary: true },
          { name: 'user_id', type: 'integer' },
          { name: 'type', type: 'varchar', length: '64' },
          { name: 'body', type: 'text' },
          { name: 'created_at', type: 'bigint' },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_deliveries',
        columns: [
          id,
          { name: 'event_id', type: 'varchar', length: '36' },
          { name: 'user_id', type: 'integer' },
          { name: 'type', type: 'varchar', length: '64' },
          { name: 'status', type: 'varchar', length: '16' },
          { name: 'attempt_count', type: 'integer', default: 0 },
          { name: 'next_attempt_at', type: 'bigint', isNullable: true },
          { name: 'locked_by', type: 'varchar', length: '36', isNullable: true },
          { name: 'locked_until', type: 'bigint', isNullable: true },
          { name: 'last_status_code', type: 'integer', isNullable: true },
          { name: 'last_error', type: 'varchar', length: '512', isNullable: true },
          { name: 'created_at', type: 'bigint' },
          { name: 'updated_at', type: 'bigint' },
        ],
        indices: [
          { name: 'ix_webhook_deliveries_due', columnNames: ['status', 'next_attempt_at'] },
          { name: 'ix_webhook_deliveries_user', columnNames: ['user_id', 'id'] },
          { name: 'ix_webhook_deliveries_lock', columnNames: ['locked_by'] },
        ],
        foreignKeys: [
          {
            name: 'fk_webhook_deliveries_event',
            columnNames: ['event_id'],
            referencedTableName: 'webhook_events',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_delivery_attempts',
        columns: [
          id,
          { name: 'delivery_id', type: 'integer' },
          { name: 'attempt_number', type: 'integer' },
          { name: 'started_at', type: 'bigint' },
          { name: 'duration_ms', type: 'integer' },
          { name: 'outcome', type: 'varchar', length: '16' },
          { name: 'status_code', type: 'integer', isNullable: true },
          { name: 'error', type: 'varchar', length: '512', isNullable: true },
          { name: 'response_excerpt', type: 'text', isNullable: true },
        ],
        indices: [{ name: 'ix_webhook_delivery_attempts_delivery', columnNames: ['delivery_id'] }],
        foreignKeys: [
          {
            name: 'fk_webhook_delivery_attempts_delivery',
            columnNames: ['delivery_id'],
            referencedTableName: 'webhook_deliveries',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('webhook_delivery_attempts');
    await queryRunner.dropTable('webhook_deliveries');
    await queryRunner.dropTable('webhook_events');
  }
}
