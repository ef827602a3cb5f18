import { DataSource } from 'typeorm';
import { databaseOptions } from '../../src/service/database/database-options';
import { AddDeliveryLogFilterIndexes1765200000000 } from '../../src/notifications/migrations/1765200000000-add-delivery-log-filter-indexes';
import { NOTIFICATIONS_MIGRATIONS } from '../../src/notifications/notifications.schema';
import { appPerSuite, describeEachDatabase } from '../support/each-database';
import { persistentDatabase } from '../support/persistent-database';
import { DELIVERIES } from '../support/settings-api';
import type { TestApp } from '../support/test-app';

/** Writes `count` deliveries of one type and status for the user straight into the tables (with their events), oldest first. */
async function seed(t: TestApp, userId: number, type: string, status: string, count: number, from: number): Promise<void> {
  for (let start = 0; start < count; start += 500) {
    const ids = Array.from({ length: Math.min(500, count - start) }, (_, i) => `log-${userId}-${from + start + i}`);
    await t.dataSource.query(
      `INSERT INTO webhook_events (id, user_id, type, body, created_at) VALUES ${ids.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
      ids.flatMap((id) => [id, userId, type, '{}', 1]),
    );
    await t.dataSource.query(
      'INSERT INTO webhook_deliveries (event_id, user_id, user_partition, type, status, attempt_count, created_at, updated_at) VALUES ' +
        ids.map(() => '(?, ?, ?, ?, ?, 6, 1, 2)').join(', '),
      ids.flatMap((id) => [id, userId, userId % 256, type, status]),
    );
  }
}

describeEachDatabase('delivery log filters on $name', (kind) => {
  const t = appPerSuite(kind, { rateLimits: false });
  const page = async (userId: number, query: string) =>
    (await t.http().get(`${DELIVERIES}?${query}`).set('Authorization', t.bearer(userId)).expect(200)).body as {
      data: Array<{ id: number; type: string; status: string }>;
      nextCursor: string | null;
    };

  it('examines at most 1,000 deliveries a page: a rare match behind many others is found by following nextCursor', async () => {
    const userId = 31;
    await seed(t, userId, 'RATE_SPIKE', 'FAILED', 1, 0); // the oldest
    await seed(t, userId, 'LOAN_EXECUTED', 'FAILED', 1_500, 1);

    const first = await page(userId, 'type=RATE_SPIKE&status=FAILED&limit=20');
    expect(first.data).toEqual([]); // 1,000 newer FAILED deliveries examined, none of the type
    expect(first.nextCursor).not.toBeNull();
    const second = await page(userId, `type=RATE_SPIKE&status=FAILED&limit=20&cursor=${first.nextCursor}`);
    expect(second.data.map((d) => [d.type, d.status])).toEqual([['RATE_SPIKE', 'FAILED']]);
    expect(second.nextCursor).toBeNull();
  });

  it('fills pages of one type or one status from their index, and pages through them to the end', async () => {
    const userId = 32;
    await seed(t, userId, 'RATE_SPIKE', 'DELIVERED', 30, 0);
    await seed(t, userId, 'LOAN_EXECUTED', 'DELIVERED', 1_200, 30);
    await seed(t, userId, 'LOAN_EXECUTED', 'FAILED', 3, 1_230);

    const byType = await page(userId, 'type=RATE_SPIKE&limit=25');
    expect(byType.data).toHaveLength(25);
    expect(byType.data.every((d) => d.type === 'RATE_SPIKE')).toBe(true);
    const rest = await page(userId, `type=RATE_SPIKE&limit=25&cursor=${byType.nextCursor}`);
    expect(rest.data).toHaveLength(5);
    expect(rest.nextCursor).toBeNull();

    const byStatus = await page(userId, 'status=FAILED&limit=2');
    expect(byStatus.data.map((d) => d.status)).toEqual(['FAILED', 'FAILED']);
    const lastFailed = await page(userId, `status=FAILED&limit=2&cursor=${byStatus.nextCursor}`);
    expect(lastFailed.data.map((d) => d.status)).toEqual(['FAILED']);
    expect(lastFailed.nextCursor).toBeNull();
  });

  it('has an index for each filter', async () => {
    const mysql = kind.name !== 'sqlite';
    const indexes = mysql
      ? (await t.dataSource.query<{ Key_name: string; Column_name: string; Seq_in_index: number }[]>('SHOW INDEX FROM webhook_deliveries'))
          .sort((a, b) => a.Seq_in_index - b.Seq_in_index)
          .reduce<Record<string, string[]>>((all, row) => ({ ...all, [row.Key_name]: [...(all[row.Key_name] ?? []), row.Column_name] }), {})
      : Object.fromEntries(
          await Promise.all(
            ['ix_webhook_deliveries_user_status', 'ix_webhook_deliveries_user_type'].map(async (name) => [
              name,
              (await t.dataSource.query<{ name: string }[]>(`PRAGMA index_info('${name}')`)).map((row) => row.name),
            ]),
          ),
        );
    expect(indexes).toMatchObject({
      ix_webhook_deliveries_user_status: ['user_id', 'status', 'id'],
      ix_webhook_deliveries_user_type: ['user_id', 'type', 'id'],
    });
  });

  it('adds the indexes in migration AddDeliveryLogFilterIndexes1765200000000, and removes them when it is reverted', async () => {
    const database = await persistentDatabase(kind);
    const dataSource = new DataSource({
      ...databaseOptions(database.config),
      entities: [],
      // Up to this migration: undoing the last one then reverts it, whatever migrations come after it.
      migrations: NOTIFICATIONS_MIGRATIONS.slice(0, NOTIFICATIONS_MIGRATIONS.indexOf(AddDeliveryLogFilterIndexes1765200000000) + 1),
      migrationsRun: false,
    });
    await dataSource.initialize();
    try {
      expect((await dataSource.runMigrations()).at(-1)?.name).toBe('AddDeliveryLogFilterIndexes1765200000000');
      const names = async () =>
        kind.name === 'sqlite'
          ? (await dataSource.query<{ name: string }[]>("SELECT name FROM sqlite_master WHERE type = 'index'")).map((row) => row.name)
          : (await dataSource.query<{ Key_name: string }[]>('SHOW INDEX FROM webhook_deliveries')).map((row) => row.Key_name);
      expect(await names()).toEqual(expect.arrayContaining(['ix_webhook_deliveries_user_status', 'ix_webhook_deliveries_user_type']));
      await dataSource.undoLastMigration();
      expect(await names()).not.toContain('ix_webhook_deliveries_user_status');
      expect(await names()).not.toContain('ix_webhook_deliveries_user_type');
      expect(await names()).toContain('ix_webhook_deliveries_user');
    } finally {
      await dataSource.destroy();
      await database.drop();
    }
  });
});
