import { DataSource } from 'typeorm';
import { databaseOptions } from '../../src/service/database/database-options';
import { AddEd25519SigningKeys1765300000000 } from '../../src/notifications/migrations/1765300000000-add-ed25519-signing-keys';
import { NOTIFICATIONS_MIGRATIONS } from '../../src/notifications/notifications.schema';
import { describeEachDatabase } from '../support/each-database';
import { persistentDatabase } from '../support/persistent-database';
import type { TestDatabase } from '../support/test-databases';

const BEFORE = NOTIFICATIONS_MIGRATIONS.slice(0, NOTIFICATIONS_MIGRATIONS.indexOf(AddEd25519SigningKeys1765300000000));
const WITH = NOTIFICATIONS_MIGRATIONS.slice(0, BEFORE.length + 1);

describeEachDatabase('Ed25519 signing keys migration on an existing $name database', (kind) => {
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

  it('keeps every existing webhook on HMAC, adds the key table (one pair per webhook, gone with it), and reverts', async () => {
    const before = await connect(BEFORE);
    await before.runMigrations();
    await before.query(
      "INSERT INTO notification_preferences (user_id, type, channel, enabled, webhook_url) VALUES (1, 'RATE_SPIKE', 'WEBHOOK', 1, 'https://a.example/')",
    );
    await before.destroy();

    const after = await connect(WITH);
    try {
      expect((await after.runMigrations()).map((m) => m.name)).toEqual(['AddEd25519SigningKeys1765300000000']);
      const [preference] = await after.query<{ id: number | string; signature_schemes: string }[]>(
        'SELECT id, signature_schemes FROM notification_preferences',
      );
      expect(preference.signature_schemes).toBe('hmac');
      const insertKey = (preferenceId: number | string) =>
        after.query(
          `INSERT INTO webhook_signing_keys (preference_id, key_id, ciphertext, public_key) VALUES (${Number(preferenceId)}, 'k', 'c', 'whpk_x')`,
        );
      await insertKey(preference.id);
      await expect(insertKey(preference.id)).rejects.toThrow(/unique|duplicate/i);
      if (kind.name === 'sqlite') await after.query('PRAGMA foreign_keys = ON');
      await after.query(`DELETE FROM notification_preferences WHERE id = ${Number(preference.id)}`);
      expect(Number((await after.query('SELECT COUNT(*) AS n FROM webhook_signing_keys'))[0].n)).toBe(0);

      await after.query(
        "INSERT INTO notification_preferences (user_id, type, channel, enabled, webhook_url, signature_schemes) VALUES (2, 'RATE_DROP', 'WEBHOOK', 1, 'https://b.example/', 'hmac,ed25519')",
      );
      await after.undoLastMigration();
      await expect(after.query('SELECT signature_schemes FROM notification_preferences')).rejects.toThrow(/signature_schemes/);
      await expect(after.query('SELECT id FROM webhook_signing_keys')).rejects.toThrow(/webhook_signing_keys/);
      expect(Number((await after.query('SELECT COUNT(*) AS n FROM notification_preferences'))[0].n)).toBe(1);
      expect((await after.runMigrations()).map((m) => m.name)).toEqual(['AddEd25519SigningKeys1765300000000']);
    } finally {
      await after.destroy();
    }
  });
});
