import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startTestReceiver, type TestReceiver } from '@funding/notification-webhooks/testing';
import { DataSource } from 'typeorm';
import { DbType } from '../../src/service/config/environment-variables';
import { databaseOptions } from '../../src/service/database/database-options';
import { describeEachDatabase } from '../support/each-database';
import { persistentDatabase } from '../support/persistent-database';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import type { TestDatabase } from '../support/test-databases';

const ROOT = resolve(__dirname, '..', '..');

// kill -9 of a real host process right after its transaction committed: the restarted service delivers the event.
describeEachDatabase('kill -9 right after the host commits, on $name', (kind) => {
  let dir: string;
  let database: TestDatabase;
  let receiver: TestReceiver;
  let restarted: ServiceProcess | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nw-commit-crash-'));
    database = await persistentDatabase(kind);
    receiver = await startTestReceiver();
    writeFileSync(join(dir, 'receiver-ca.pem'), receiver.caPem);
  });
  afterAll(async () => {
    restarted?.child.kill('SIGKILL');
    await receiver.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({
    ...(database.config.type === DbType.sqlite
      ? { DB_PATH: database.config.path }
      : { DB_TYPE: database.config.type, DATABASE_URL: database.config.url }),
    JWT_SECRET: 'crash-test-jwt-secret-0123456789abcdef0123',
    SECRETS_ENCRYPTION_KEY: `k1:${KEY}`,
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    WEBHOOK_EXTRA_CA_FILE: join(dir, 'receiver-ca.pem'),
    DELIVERY_TIMEOUT_MS: '1000',
    DELIVERY_LEASE_MS: '8100', // more than the timeout + 7 s (record budget and tolerated clock skew)
    LOG_LEVEL: 'warn',
  });

  it('stores the event with the host row, sends nothing, and the restarted worker delivers it once', async () => {
    const host = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'test/support/commit-then-die.ts'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, TS_NODE_PROJECT: join(ROOT, 'tsconfig.json'), ...env(), HOOK_URL: receiver.url('/crash') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    host.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    host.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const [, signal] = (await once(host, 'exit')) as [number | null, NodeJS.Signals | null];
    expect(signal, output).toBe('SIGKILL');
    const { eventId, orderId } = JSON.parse(
      output
        .trim()
        .split('\n')
        .find((line) => line.startsWith('{'))!,
    ) as Record<string, string>;

    const rows = await withDataSource(database, async (ds) => ({
      orders: await ds.query('SELECT id FROM host_orders WHERE id = ?', [orderId]),
      deliveries: await ds.query('SELECT status, attempt_count FROM webhook_deliveries WHERE event_id = ?', [eventId]),
    }));
    expect(rows.orders).toHaveLength(1);
    expect(rows.deliveries.map((d: { status: string; attempt_count: number }) => [d.status, Number(d.attempt_count)])).toEqual([
      ['PENDING', 0],
    ]);
    expect(receiver.requests).toHaveLength(0);

    restarted = await startServiceProcess({ ...env(), PROCESS_ROLE: 'worker' });
    // The dead process's partition leases end partitionLeaseMs (23 s with a 1 s deadline) after its last renewal.
    const [hook] = await receiver.waitForDelivery({ timeoutMs: 45_000 });
    expect(hook.eventId).toBe(eventId);
    expect(hook.path).toBe('/crash');
    // Once the attempt is recorded, the delivery is finished: no second request can follow.
    await expect.poll(() => statusOf(database, eventId), { timeout: 10_000, interval: 200 }).toBe('DELIVERED');
    expect(receiver.requests).toHaveLength(1);
  }, 120_000);
});

const KEY = randomBytes(32).toString('base64');

async function statusOf(database: TestDatabase, eventId: string): Promise<string> {
  const [row] = await withDataSource(database, (ds) => ds.query('SELECT status FROM webhook_deliveries WHERE event_id = ?', [eventId]));
  return (row as { status: string }).status;
}

async function withDataSource<T>(database: TestDatabase, use: (dataSource: DataSource) => Promise<T>): Promise<T> {
  const dataSource = await new DataSource({ ...databaseOptions(database.config), migrationsRun: false }).initialize();
  try {
    return await use(dataSource);
  } finally {
    await dataSource.destroy();
  }
}
