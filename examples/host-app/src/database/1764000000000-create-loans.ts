import { type MigrationInterface, type QueryRunner, Table } from 'typeorm';

export class CreateLoans1764000000000 implements MigrationInterface {
  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.createTable(
      new Table({
        name: 'loans',
        columns: [
          { name: 'id', type: 'int', isPrimary: true, isGenerated: true, generationStrategy: 'increment' },
          { name: 'user_id', type: 'int' },
          { name: 'currency', type: 'varchar', length: '8' },
          { name: 'amount', type: 'double' },
          { name: 'daily_rate', type: 'double' },
          { name: 'days', type: 'int' },
          { name: 'created_at', type: 'datetime', precision: 6, default: 'CURRENT_TIMESTAMP(6)' },
        ],
        indices: [{ columnNames: ['user_id'] }],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('loans');
  }
}
