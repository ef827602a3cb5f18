import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestReceiver, type TestReceiver } from '@funding/notification-webhooks/testing';
import { createConnection } from 'mysql2/promise';
import { signUserToken } from '../../src/notifications/auth/jwt-user-resolver';
import { startServiceProcess, type ServiceProcess } from '../support/service-process';
import { createMysqlDatabase } from '../support/mysql-database';

const JWT_SECRET = 'roles-test-jwt-secret-0123456789abcdef0123';
const INTERNAL_TOKEN = 'roles-test-internal-token-0123456789abcdef';
const USERS = [21, 22, 23];
const BATCHES = 8;
const PER_BATCH = 50;

// Two `api` processes publish, two `worker` processes deliver, on one MariaDB database: real service processes.
describe('2 api and 2 worker processes on MariaDB', () => {
  let dir: string;
  let database: { url: string; drop(): Promise<void> };
  let receiver: TestReceiver;
  let apis: ServiceProcess[] = [];
  let workers: ServiceProcess[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nw-roles-'));
    database = await createMysqlDatabase(process.env.TEST_MYSQL_URL!, `nw_roles_${randomBytes(6).toString('hex')}`);
    receiver = await startTestReceiver();
    writeFileSync(join(dir, 'receiver-ca.pem'), receiver.caPem);
    const env = (role: string) => ({
      PROCESS_ROLE: role,
      DB_TYPE: 'mysql',
      DATABASE_URL: database.url,
      JWT_SECRET,
      INTERNAL_API_TOKEN: INTERNAL_TOKEN,
      SECRETS_ENCRYPTION_KEY: `k1:${KEY}`,
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      WEBHOOK_EXTRA_CA_FILE: join(dir, 'receiver-ca.pem'),
      LOG_LEVEL: 'warn',
    });
    // The first start runs the migrations alone; the other three start together.
    apis = [await startServiceProcess(env('api'))];
    const rest = await Promise.all([
      startServiceProcess(env('api')),
      startServiceProcess(env('worker')),
      startServiceProcess(env('worker')),
    ]);
    apis.push(rest[0]);
    workers = rest.slice(1);
  }, 180_000);
  afterAll(async () => {
    for (const process of [...apis, ...workers]) process.child.kill('SIGKILL');
    await receiver.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const settings = (base: string, userId: number, init: RequestInit = {}) =>
    fetch(`${base}/api/v1/settings/notifications`, {
      ...init,
      headers: { Authorization: `Bearer ${signUserToken(JWT_SECRET, userId)}`, 'Content-Type': 'application/json' },
    });
  const publish = (base: string, events: object[]) =>
    fetch(`${base}/api/v1/internal/notifications/events`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${INTERNAL_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ events }),
    });
  const event = (userId: number, title: string) => ({ userId, type: 'RATE_SPIKE', severity: 'INFO', title, body: 'USD' });

  it('serves the settings API on api processes only: a worker answers 404', async () => {
    for (const userId of USERS) {
      const body = JSON.stringify({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: receiver.url(`/u${userId}`) });
      expect((await settings(apis[userId % 2].baseUrl, userId, { method: 'PUT', body })).status).toBe(200);
    }
    expect((await settings(workers[0].baseUrl, USERS[0])).status).toBe(404);
    expect((await publish(workers[1].baseUrl, [event(USERS[0], 'to a worker')])).status).toBe(404);
    expect(receiver.requests).toHaveLength(0);
  });

  it('a worker sends what an api process published within about a second', async () => {
    receiver.clear();
    const published = await publish(apis[0].baseUrl, [event(USERS[0], 'first')]);
    const acknowledgedAt = Date.now();
    expect(published.status).toBe(202);
    const [hook] = await receiver.waitForDelivery({ timeoutMs: 5_000 });
    expect(hook.receivedAt - acknowledgedAt).toBeLessThan(2_500); // the workers look for due work every second
  });

  it('delivers every event published on both api processes exactly once', async () => {
    receiver.clear();
    const published = new Set<string>();
    await Promise.all(
      Array.from({ length: BATCHES }, async (_, batch) => {
        const events = Array.from({ length: PER_BATCH }, (_, i) => event(USERS[(batch + i) % USERS.length], `b${batch} e${i}`));
        const response = await publish(apis[batch % 2].baseUrl, events);
        expect(response.status).toBe(202);
        for (const id of ((await response.json()) as { eventIds: string[] }).eventIds) published.add(id);
      }),
    );
    expect(published.size).toBe(BATCHES * PER_BATCH);

    await receiver.waitForDelivery({ count: published.size, timeoutMs: 60_000 });
    const counts = new Map<string, number>();
    for (const request of receiver.requests) counts.set(request.eventId!, (counts.get(request.eventId!) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...published].sort());
    expect([...counts.values()].filter((n) => n > 1)).toEqual([]); // 0 duplicates

    // The attempts are recorded just after the requests: every delivery ends DELIVERED, after one attempt.
    const statuses = async () => {
      const connection = await createConnection({ uri: database.url });
      const [rows] = await connection.query(
        'SELECT status, attempt_count AS attempts, COUNT(*) AS n FROM webhook_deliveries GROUP BY status, attempt_count',
      );
      await connection.end();
      return rows;
    };
    await expect
      .poll(statuses, { timeout: 10_000, interval: 200 })
      .toEqual([{ status: 'DELIVERED', attempts: 1, n: BATCHES * PER_BATCH + 1 }]);
    expect(receiver.requests).toHaveLength(BATCHES * PER_BATCH);
  }, 90_000);
});

const KEY = randomBytes(32).toString('base64');
