import { DataSource } from 'typeorm';
import { databaseOptions } from '../../src/service/database/database-options';
import { CreateEventSchemas1765400000000 } from '../../src/notifications/migrations/1765400000000-create-event-schemas';
import { NOTIFICATIONS_MIGRATIONS } from '../../src/notifications/notifications.schema';
import { describeEachDatabase } from '../support/each-database';
import { persistentDatabase } from '../support/persistent-database';
import type { TestDatabase } from '../support/test-databases';

const BEFORE = NOTIFICATIONS_MIGRATIONS.slice(0, NOTIFICATIONS_MIGRATIONS.indexOf(CreateEventSchemas1765400000000));
const WITH = NOTIFICATIONS_MIGRATIONS.slice(0, BEFORE.length + 1);

describeEachDatabase('event schemas migration on an existing $name database', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await persistentDatabase(kind);
  });
  afterAll(() => database.drop());

  const connect = async (migrations: typeof NOTIFICATIONS_MIGRATIONS) => {
    const dataSource = new DataSource({ ...databaseOptions(database.config), entities: [], migrations, migrationsRun: false });
    await dataSource.initialize();
    return dataSource;
  };

  it('adds the published schemas keyed by type and version, holding a schema over 64 KiB, and reverts', async () => {
    const before = await connect(BEFORE);
    await before.runMigrations();
    await before.destroy();
    const after = await connect(WITH);
    try {
      expect((await after.runMigrations()).map((m) => m.name)).toEqual(['CreateEventSchemas1765400000000']);
      const large = JSON.stringify({ type: 'object', description: 'x'.repeat(100_000) });
      const insert = (type: string, version: number) =>
        after.query(
          'INSERT INTO webhook_event_schemas (event_type, version, `schema`, published_at, updated_at) VALUES (?, ?, ?, 1, 1)'.replaceAll(
            '`',
            kind.name === 'sqlite' ? '"' : '`',
          ),
          [type, version, large],
        );
      await insert('LOAN_EXECUTED', 1);
      await insert('LOAN_EXECUTED', 2);
      await expect(insert('LOAN_EXECUTED', 1)).rejects.toThrow();
      const rows = await after.query<{ n: number | string }[]>('SELECT COUNT(*) AS n FROM webhook_event_schemas');
      expect(Number(rows[0].n)).toBe(2);
      await after.undoLastMigration();
      await expect(after.query('SELECT 1 FROM webhook_event_schemas')).rejects.toThrow(/webhook_event_schemas/);
    } finally {
      await after.destroy();
    }
  });
});
