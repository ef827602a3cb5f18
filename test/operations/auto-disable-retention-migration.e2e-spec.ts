import { DataSource } from 'typeorm';
import { databaseOptions } from '../../src/service/database/database-options';
import { NOTIFICATIONS_MIGRATIONS } from '../../src/notifications/notifications.schema';
import { OnePendingDeliveryPerEvent1764200000000 } from '../../src/notifications/migrations/1764200000000-one-pending-delivery-per-event';
import { describeEachDatabase } from '../support/each-database';
import { persistentDatabase } from '../support/persistent-database';
import type { TestDatabase } from '../support/test-databases';

const count = async (dataSource: DataSource, table: string) => Number((await dataSource.query(`SELECT COUNT(*) AS n FROM ${table}`))[0].n);

describeEachDatabase('auto-disable and retention migration on an existing $name database', (kind) => {
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

  it('adds the columns and indexes without losing preferences, secrets, deliveries or attempts, and reverts cleanly', async () => {
    const before = await connect(NOTIFICATIONS_MIGRATIONS.slice(0, 2));
    await before.runMigrations();
    await before.query(
      "INSERT INTO notification_preferences (user_id, type, channel, enabled, webhook_url) VALUES (5, 'RATE_SPIKE', 'WEBHOOK', 1, 'https://hooks.example.com/a')",
    );
    await before.query("INSERT INTO webhook_signing_secrets (preference_id, key_id, ciphertext) VALUES (1, 'k1', 'c2VhbGVk')");
    await before.query("INSERT INTO webhook_events (id, user_id, type, body, created_at) VALUES ('e1', 5, 'RATE_SPIKE', '{}', 1)");
    await before.query(
      "INSERT INTO webhook_deliveries (event_id, user_id, type, status, attempt_count, created_at, updated_at) VALUES ('e1', 5, 'RATE_SPIKE', 'DELIVERED', 1, 1, 2)",
    );
    await before.query(
      "INSERT INTO webhook_delivery_attempts (delivery_id, attempt_number, started_at, duration_ms, outcome) VALUES (1, 1, 1, 10, 'success')",
    );
    await before.destroy();

    const after = await connect(NOTIFICATIONS_MIGRATIONS.slice(0, 3));
    try {
      expect((await after.runMigrations()).map((m) => m.name)).toEqual(['AddAutoDisableAndRetentionIndexes1764000000000']);
      const [preference] = await after.query(
        'SELECT enabled, webhook_url, consecutive_failures, disabled_reason FROM notification_preferences',
      );
      expect({ ...preference, enabled: Number(preference.enabled), consecutive_failures: Number(preference.consecutive_failures) }).toEqual(
        {
          enabled: 1,
          webhook_url: 'https://hooks.example.com/a',
          consecutive_failures: 0,
          disabled_reason: null,
        },
      );
      for (const table of ['webhook_signing_secrets', 'webhook_events', 'webhook_deliveries', 'webhook_delivery_attempts'])
        expect(await count(after, table)).toBe(1);
      const deliveries = await after.createQueryRunner().getTable('webhook_deliveries');
      expect(deliveries?.indices.map((index) => index.name)).toEqual(
        expect.arrayContaining(['ix_webhook_deliveries_retention', 'ix_webhook_deliveries_event']),
      );

      await after.undoLastMigration();
      const reverted = await after.createQueryRunner().getTable('webhook_deliveries');
      expect(reverted?.indices.map((index) => index.name)).not.toContain('ix_webhook_deliveries_event');
      expect(reverted?.foreignKeys.map((key) => key.name)).toContain('fk_webhook_deliveries_event');
      expect((await after.createQueryRunner().getTable('notification_preferences'))?.columns.map((c) => c.name)).not.toContain(
        'disabled_reason',
      );
      for (const table of ['webhook_signing_secrets', 'webhook_deliveries', 'webhook_delivery_attempts'])
        expect(await count(after, table)).toBe(1);

      expect(await after.runMigrations()).toHaveLength(1);
    } finally {
      await after.destroy();
    }
  });

  it('then adds the waiting reason of parked deliveries, null for the existing ones, and reverts without losing a row', async () => {
    const latest = await connect(NOTIFICATIONS_MIGRATIONS.slice(0, 4));
    try {
      expect((await latest.runMigrations()).map((m) => m.name)).toEqual(['AddDeliveryWaitingReason1764100000000']);
      expect(await latest.query('SELECT status, waiting_reason FROM webhook_deliveries')).toEqual([
        { status: 'DELIVERED', waiting_reason: null },
      ]);

      await latest.undoLastMigration();
      const reverted = await latest.createQueryRunner().getTable('webhook_deliveries');
      expect(reverted?.columns.map((c) => c.name)).not.toContain('waiting_reason');
      expect(reverted?.foreignKeys.map((key) => key.name)).toContain('fk_webhook_deliveries_event');
      for (const table of ['webhook_signing_secrets', 'webhook_events', 'webhook_deliveries', 'webhook_delivery_attempts'])
        expect(await count(latest, table)).toBe(1);
      expect(await latest.runMigrations()).toHaveLength(1);
    } finally {
      await latest.destroy();
    }
  });

  it('then keeps one PENDING delivery per event: cycles that ran side by side keep their oldest, a second is refused', async () => {
    const latest = await connect(
      NOTIFICATIONS_MIGRATIONS.slice(0, NOTIFICATIONS_MIGRATIONS.indexOf(OnePendingDeliveryPerEvent1764200000000) + 1),
    );
    const pendingOf = (event: string) =>
      `INSERT INTO webhook_deliveries (event_id, user_id, type, status, attempt_count, created_at, updated_at) VALUES ('${event}', 5, 'RATE_SPIKE', 'PENDING', 0, 3, 3)`;
    try {
      await latest.query(pendingOf('e1'));
      await latest.query(pendingOf('e1'));
      expect((await latest.runMigrations()).map((m) => m.name)).toEqual(['OnePendingDeliveryPerEvent1764200000000']);
      expect(await latest.query('SELECT id, status FROM webhook_deliveries ORDER BY id')).toEqual([
        { id: 1, status: 'DELIVERED' },
        { id: 2, status: 'PENDING' },
        { id: 3, status: 'CANCELLED' },
      ]);
      await expect(latest.query(pendingOf('e1'))).rejects.toThrow(/UNIQUE|Duplicate/);
      expect(await latest.query('SELECT was_delivered FROM webhook_events')).toEqual([{ was_delivered: 0 }]);

      await latest.undoLastMigration();
      await latest.query(pendingOf('e1'));
      expect(await count(latest, 'webhook_deliveries')).toBe(4);
      await latest.query("DELETE FROM webhook_deliveries WHERE status = 'PENDING'");
      expect(await latest.runMigrations()).toHaveLength(1);
    } finally {
      await latest.destroy();
    }
  });
});
