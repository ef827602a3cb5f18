import { type MigrationInterface, type QueryRunner, Table } from 'typeorm';

export class CreatePreferencesAndSecrets1763800000000 implements MigrationInterface {
  name = 'CreatePreferencesAndSecrets1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'notification_preferences',
        columns: [
          { name: 'id', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' },
          { name: 'user_id', type: 'integer' },
          { name: 'type', type: 'varchar', length: '64' },
          { name: 'channel', type: 'varchar', length: '16' },
          { name: 'enabled', type: 'boolean' },
          { name: 'webhook_url', type: 'varchar', length: '2048', isNullable: true },
          { name: 'created_at', type: 'datetime', default: 'CURRENT_TIMESTAMP' },
          { name: 'updated_at', type: 'datetime', default: 'CURRENT_TIMESTAMP' },
        ],
        indices: [
          {
            name: 'uq_notification_preferences_user_type_channel',
            columnNames: ['user_id', 'type', 'channel'],
            isUnique: true,
          },
        ],
      }),
    );
    await queryRunner.createTable(
      new Table({
        name: 'webhook_signing_secrets',
        columns: [
          { name: 'id', type: 'integer', isPrimary: true, isGenerated: true, generationStrategy: 'increment' },
          { name: 'preference_id', type: 'integer', isUnique: true },
          { name: 'key_id', type: 'varchar', length: '32' },
          { name: 'ciphertext', type: 'varchar', length: '512' },
          { name: 'created_at', type: 'datetime', default: 'CURRENT_TIMESTAMP' },
        ],
        foreignKeys: [
          {
            name: 'fk_webhook_signing_secrets_preference',
            columnNames: ['preference_id'],
            referencedTableName: 'notification_preferences',
            referencedColumnNames: ['id'],
            onDelete: 'CASCADE',
          },
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('webhook_signing_secrets');
    await queryRunner.dropTable('notification_preferences');
  }
}
