import { DataSource } from 'typeorm';
import { databaseOptions } from '../../src/service/database/database-options';
import { AddDeliverySequences1765600000000 } from '../../src/notifications/migrations/1765600000000-add-delivery-sequences';
import { NOTIFICATIONS_MIGRATIONS } from '../../src/notifications/notifications.schema';
import { streamUrlHash } from '../../src/notifications/preferences/webhook-stream.repository';
import { describeEachDatabase } from '../support/each-database';
import { persistentDatabase } from '../support/persistent-database';
import type { TestDatabase } from '../support/test-databases';

const BEFORE = NOTIFICATIONS_MIGRATIONS.slice(0, NOTIFICATIONS_MIGRATIONS.indexOf(AddDeliverySequences1765600000000));
const WITH = NOTIFICATIONS_MIGRATIONS.slice(0, BEFORE.length + 1);

describeEachDatabase('delivery sequences migration on an existing $name database', (kind) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await persistentDatabase(kind);
  });
  afterAll(async () => {
    await database.drop();
  });

  const connect = async (migrations: typeof NOTIFICATIONS_MIGRATIONS) => {
    const dataSource = new DataSource({ ...databaseOptions(database.config), entities: [], migrations, migrationsRun: false });
    await dataSource.initialize();
    return dataSource;
  };

  it('gives every webhook the stream of its URL (one per user and URL), no number to existing deliveries, and reverts', async () => {
    const before = await connect(BEFORE);
    await before.runMigrations();
    const webhook = (userId: number, type: string, url: string | null, channel = 'WEBHOOK') =>
      before.query('INSERT INTO notification_preferences (user_id, type, channel, enabled, webhook_url) VALUES (?, ?, ?, 1, ?)', [
        userId,
        type,
        channel,
        url,
      ]);
    await webhook(1, 'RATE_SPIKE', 'https://a.example/');
    await webhook(1, 'RATE_DROP', 'https://a.example/');
    await webhook(1, 'LOAN_EXECUTED', 'https://b.example/');
    await webhook(2, 'RATE_SPIKE', 'https://a.example/');
    await webhook(2, 'RATE_DROP', null, 'EMAIL');
    await before.query("INSERT INTO webhook_events (id, user_id, type, body, created_at) VALUES ('e1', 1, 'RATE_SPIKE', '{}', 1)");
    await before.query(
      "INSERT INTO webhook_deliveries (event_id, user_id, user_partition, type, status, attempt_count, next_attempt_at, created_at, updated_at) VALUES ('e1', 1, 1, 'RATE_SPIKE', 'PENDING', 0, 1, 1, 1)",
    );
    await before.destroy();

    const after = await connect(WITH);
    try {
      expect((await after.runMigrations()).map((m) => m.name)).toEqual(['AddDeliverySequences1765600000000']);
      const rows = await after.query<
        {
          user_id: number | string;
          type: string;
          stream_id: number | string | null;
          url_hash: string | null;
          last_sequence: number | string | null;
          ordered: unknown;
        }[]
      >(
        'SELECT p.user_id, p.type, p.stream_id, s.url_hash, s.last_sequence, s.ordered FROM notification_preferences p ' +
          'LEFT JOIN webhook_streams s ON s.id = p.stream_id ORDER BY p.id',
      );
      const streamOf = (type: string, userId = 1) => rows.find((row) => row.type === type && Number(row.user_id) === userId)!;
      expect(streamOf('RATE_SPIKE').stream_id).toBe(streamOf('RATE_DROP').stream_id);
      expect(streamOf('RATE_SPIKE').url_hash).toBe(streamUrlHash('https://a.example/'));
      expect(streamOf('LOAN_EXECUTED').url_hash).toBe(streamUrlHash('https://b.example/'));
      expect(
        new Set([streamOf('RATE_SPIKE'), streamOf('LOAN_EXECUTED'), streamOf('RATE_SPIKE', 2)].map((row) => Number(row.stream_id))).size,
      ).toBe(3);
      expect(streamOf('RATE_DROP', 2).stream_id).toBeNull();
      for (const row of rows.filter((r) => r.stream_id !== null)) expect([Number(row.last_sequence), Number(row.ordered)]).toEqual([0, 0]);
      const [delivery] = await after.query<{ stream_id: unknown; sequence: unknown }[]>(
        'SELECT stream_id, sequence FROM webhook_deliveries',
      );
      expect(delivery).toEqual({ stream_id: null, sequence: null });

      await after.undoLastMigration();
      await expect(after.query('SELECT id FROM webhook_streams')).rejects.toThrow(/webhook_streams/);
      await expect(after.query('SELECT sequence FROM webhook_deliveries')).rejects.toThrow(/sequence/);
      await expect(after.query('SELECT stream_id FROM notification_preferences')).rejects.toThrow(/stream_id/);
      expect((await after.runMigrations()).map((m) => m.name)).toEqual(['AddDeliverySequences1765600000000']);
    } finally {
      await after.destroy();
    }
  });
});
