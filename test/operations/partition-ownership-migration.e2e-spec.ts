import { DataSource } from 'typeorm';
import { databaseOptions } from '../../src/service/database/database-options';
import { PartitionLeaseRepository } from '../../src/notifications/delivery/partitions/partition-lease.repository';
import { PartitionOwnership1765000000000, PREVIOUS_VERSION } from '../../src/notifications/migrations/1765000000000-partition-ownership';
import { AddInstanceAnsweredAt1765100000000 } from '../../src/notifications/migrations/1765100000000-add-instance-answered-at';
import { CreateEndpointCircuits1765500000000 } from '../../src/notifications/migrations/1765500000000-create-endpoint-circuits';
import { NOTIFICATIONS_MIGRATIONS } from '../../src/notifications/notifications.schema';
import { describeEachDatabase } from '../support/each-database';
import { persistentDatabase } from '../support/persistent-database';
import type { TestDatabase } from '../support/test-databases';

const BEFORE = NOTIFICATIONS_MIGRATIONS.slice(0, NOTIFICATIONS_MIGRATIONS.indexOf(PartitionOwnership1765000000000));
const WITH = NOTIFICATIONS_MIGRATIONS.slice(0, BEFORE.length + 1);
const through = (migration: (typeof NOTIFICATIONS_MIGRATIONS)[number]) =>
  NOTIFICATIONS_MIGRATIONS.slice(0, NOTIFICATIONS_MIGRATIONS.indexOf(migration) + 1);
const REPLACED = ['webhook_endpoint_failures', 'webhook_endpoint_probes', 'webhook_endpoint_slots'];
const ADDED = ['webhook_delivery_instances', 'webhook_partitions'];
const NOW = 1_800_000_000_000;

/** Runs `use` with `dataSource`, then closes it. */
async function withDataSource<T>(dataSource: DataSource, use: (dataSource: DataSource) => Promise<T>): Promise<T> {
  try {
    return await use(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

describeEachDatabase('partition ownership migration on an existing $name database', (kind) => {
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
  // Read from the catalogue: TypeORM's own table reader wants its metadata table on MySQL once a generated column exists.
  const mysql = kind.name !== 'sqlite';
  const tables = async (dataSource: DataSource) =>
    (
      await dataSource.query<{ name: string }[]>(
        mysql
          ? 'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()'
          : "SELECT name FROM sqlite_master WHERE type = 'table'",
      )
    ).map((row) => row.name);
  /** Each distinct holder and lease end of the partitions, once 256 rows were found. */
  const partitionHolders = async (dataSource: DataSource) => {
    const rows = await dataSource.query<{ holder: string | null; lease_until: unknown }[]>(
      'SELECT holder, lease_until FROM webhook_partitions',
    );
    expect(rows).toHaveLength(256);
    return [...new Set(rows.map((row) => `${row.holder} until ${Number(row.lease_until)}`))];
  };
  const indicesOfDeliveries = async (dataSource: DataSource) =>
    mysql
      ? (await dataSource.query<{ Key_name: string }[]>('SHOW INDEX FROM webhook_deliveries')).map((row) => row.Key_name)
      : (
          await dataSource.query<{ name: string }[]>(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'webhook_deliveries'",
          )
        ).map((row) => row.name);

  it("puts each existing delivery in its user's partition, makes the 256 free partitions, drops the per-endpoint tables, and reverts", async () => {
    const before = await connect(BEFORE);
    await before.runMigrations();
    for (const [i, userId] of [1, 256, 300, 2_147_483_647].entries()) {
      await before.query(
        `INSERT INTO webhook_events (id, user_id, type, body, created_at) VALUES ('e${i}', ${userId}, 'RATE_SPIKE', '{}', 1)`,
      );
      await before.query(
        `INSERT INTO webhook_deliveries (event_id, user_id, type, status, attempt_count, created_at, updated_at) VALUES ('e${i}', ${userId}, 'RATE_SPIKE', 'DELIVERED', 1, 1, 2)`,
      );
    }
    await before.query("INSERT INTO webhook_endpoint_failures (endpoint, failures) VALUES ('1 a.example:443', 3)");
    await before.destroy();

    const after = await connect(WITH);
    try {
      expect((await after.runMigrations()).map((m) => m.name)).toEqual(['PartitionOwnership1765000000000']);
      const deliveries = await after.query<{ user_id: number | string; user_partition: number | string }[]>(
        'SELECT user_id, user_partition FROM webhook_deliveries ORDER BY id',
      );
      expect(deliveries.map((row) => [Number(row.user_id), Number(row.user_partition)])).toEqual([
        [1, 1],
        [256, 0],
        [300, 44],
        [2_147_483_647, 255],
      ]);
      const partitions = await after.query<
        { user_partition: number | string; holder: string | null; lease_until: unknown; epoch: unknown }[]
      >('SELECT user_partition, holder, lease_until, epoch FROM webhook_partitions ORDER BY user_partition');
      expect(partitions.map((row) => Number(row.user_partition))).toEqual(Array.from({ length: 256 }, (_, partition) => partition));
      expect(new Set(partitions.map((row) => `${row.holder} ${Number(row.lease_until)} ${Number(row.epoch)}`))).toEqual(
        new Set(['null 0 0']),
      );
      const current = await tables(after);
      expect(current).toEqual(expect.arrayContaining(ADDED));
      for (const table of REPLACED) expect(current).not.toContain(table);
      expect(await indicesOfDeliveries(after)).toEqual(
        expect.arrayContaining(['ix_webhook_deliveries_due', 'ix_webhook_deliveries_partition_due']),
      );
      if (mysql) {
        // An instance of the previous version (it knows no partition column) still publishes during a rolling deploy.
        await after.query("INSERT INTO webhook_events (id, user_id, type, body, created_at) VALUES ('e9', 300, 'RATE_SPIKE', '{}', 1)");
        await after.query(
          "INSERT INTO webhook_deliveries (event_id, user_id, type, status, attempt_count, created_at, updated_at) VALUES ('e9', 300, 'RATE_SPIKE', 'PENDING', 0, 1, 1)",
        );
        const [published] = await after.query<{ user_partition: unknown }[]>(
          "SELECT user_partition FROM webhook_deliveries WHERE event_id = 'e9'",
        );
        expect(Number(published.user_partition)).toBe(44);
        await after.query("DELETE FROM webhook_deliveries WHERE event_id = 'e9'");
      }

      await after.undoLastMigration();
      const reverted = await tables(after);
      expect(reverted).toEqual(expect.arrayContaining(REPLACED));
      for (const table of ADDED) expect(reverted).not.toContain(table);
      await expect(after.query('SELECT user_partition FROM webhook_deliveries')).rejects.toThrow(/user_partition/);
      expect(await indicesOfDeliveries(after)).not.toContain('ix_webhook_deliveries_partition_due');
      expect(Number((await after.query('SELECT COUNT(*) AS n FROM webhook_deliveries'))[0].n)).toBe(4);
      expect((await after.runMigrations()).map((m) => m.name)).toEqual(['PartitionOwnership1765000000000']);
    } finally {
      await after.destroy();
    }
  });

  it('holds every partition for the previous version until the last slot it held ends: no new instance sends before', async () => {
    await withDataSource(await connect(WITH), async (before) => {
      await before.undoLastMigration(); // back to before the partitions, from the previous test's state
      for (const [slot, heldUntil] of [
        [0, NOW + 40_000], // a request of the previous version in flight as the migration runs
        [1, NOW - 1_000], // a slot held earlier
        [2, 0], // released
      ])
        await before.query(
          `INSERT INTO webhook_endpoint_slots (endpoint, slot, holder, held_until) VALUES ('1 a.example:443', ${slot}, 'old', ${heldUntil})`,
        );
    });
    await withDataSource(await connect(WITH), async (after) => {
      await after.runMigrations();
      expect(await partitionHolders(after)).toEqual([`${PREVIOUS_VERSION} until ${NOW + 40_000}`]);
      const leases = new PartitionLeaseRepository(after);
      expect(await leases.take('new', [0, 1, 255], NOW + 40_000, NOW + 60_000)).toEqual([]);
      expect(await leases.take('new', [0, 1, 255], NOW + 40_001, NOW + 60_000)).toHaveLength(3);
    });
  });

  it('resumes a run that stopped half-way (each DDL statement commits alone on MySQL/MariaDB)', async () => {
    await withDataSource(await connect(WITH), async (dataSource) => {
      await dataSource.undoLastMigration();
      await dataSource.query(
        `INSERT INTO webhook_endpoint_slots (endpoint, slot, holder, held_until) VALUES ('1 a.example:443', 0, 'old', ${NOW + 40_000})`,
      );
      // The first two statements of a run that failed at the third:
      await dataSource.query('ALTER TABLE webhook_endpoint_slots RENAME TO webhook_endpoint_slots_retired');
      await dataSource.query('ALTER TABLE webhook_deliveries ADD COLUMN user_partition smallint NOT NULL DEFAULT 0');
      expect((await dataSource.runMigrations()).map((m) => m.name)).toEqual(['PartitionOwnership1765000000000']);
      const deliveries = await dataSource.query<{ user_partition: unknown }[]>('SELECT user_partition FROM webhook_deliveries ORDER BY id');
      expect(deliveries.map((row) => Number(row.user_partition))).toEqual([1, 0, 44, 255]);
      expect(await partitionHolders(dataSource)).toEqual([`${PREVIOUS_VERSION} until ${NOW + 40_000}`]);
      const current = await tables(dataSource);
      for (const table of [...REPLACED, 'webhook_endpoint_slots_retired']) expect(current).not.toContain(table);
    });
  });

  it('then tells when a receiver last answered each instance (null until one did), and reverts keeping the instances', async () => {
    const latest = await connect(through(AddInstanceAnsweredAt1765100000000));
    try {
      expect((await latest.runMigrations()).map((m) => m.name)).toEqual(['AddInstanceAnsweredAt1765100000000']);
      await latest.query("INSERT INTO webhook_delivery_instances (holder, alive_until) VALUES ('a', 5)");
      await latest.query("INSERT INTO webhook_delivery_instances (holder, alive_until, answered_at) VALUES ('b', 5, 4)");
      const rows = await latest.query<{ holder: string; answered_at: unknown }[]>(
        'SELECT holder, answered_at FROM webhook_delivery_instances ORDER BY holder',
      );
      expect(rows.map((row) => [row.holder, row.answered_at === null ? null : Number(row.answered_at)])).toEqual([
        ['a', null],
        ['b', 4],
      ]);
      await latest.undoLastMigration();
      await expect(latest.query('SELECT answered_at FROM webhook_delivery_instances')).rejects.toThrow(/answered_at/);
      expect(Number((await latest.query('SELECT COUNT(*) AS n FROM webhook_delivery_instances'))[0].n)).toBe(2);
    } finally {
      await latest.destroy();
    }
  });

  it('then keeps endpoint circuits for the next owner of a partition, one row per user and host, and reverts', async () => {
    const latest = await connect(through(CreateEndpointCircuits1765500000000));
    try {
      expect((await latest.runMigrations()).map((m) => m.name)).toContain('CreateEndpointCircuits1765500000000');
      const insert = (host: string) =>
        latest.query(
          `INSERT INTO webhook_endpoint_circuits (user_id, host, user_partition, failures, open_until, cool_down_ms, last_failure_at, forget_after) VALUES (3, '${host}', 3, 5, NULL, 30000, 1, 2)`,
        );
      await insert('a.example');
      await insert('b.example:8443');
      await expect(insert('a.example')).rejects.toThrow(/duplicate|unique/i);
      await latest.undoLastMigration();
      await expect(latest.query('SELECT host FROM webhook_endpoint_circuits')).rejects.toThrow(/webhook_endpoint_circuits/);
    } finally {
      await latest.destroy();
    }
  });
});
