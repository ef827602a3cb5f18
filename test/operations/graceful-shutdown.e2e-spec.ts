import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestReceiver, type TestReceiver } from '@funding/notification-webhooks/testing';
import Database from 'better-sqlite3';
import { signUserToken } from '../../src/notifications/auth/jwt-user-resolver';
import { jsonLogLines, startServiceProcess, type ServiceProcess } from '../support/service-process';

const JWT_SECRET = 'shutdown-test-jwt-secret-0123456789abcdef';
const INTERNAL_TOKEN = 'shutdown-test-internal-token-0123456789abcdef';
const EVENTS = 10;
const CONCURRENCY = 2;

describe('graceful shutdown of a real service process on SIGTERM', () => {
  let dir: string;
  let receiver: TestReceiver;
  let service: ServiceProcess;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'nw-shutdown-'));
    receiver = await startTestReceiver();
    writeFileSync(join(dir, 'receiver-ca.pem'), receiver.caPem);
    service = await startServiceProcess({
      NODE_ENV: 'production',
      DB_TYPE: 'sqlite',
      DB_PATH: join(dir, 'notifications.sqlite'),
      JWT_SECRET,
      JWT_ISSUER: 'https://funding.example.com',
      JWT_AUDIENCE: 'notification-settings',
      SECRETS_ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}`,
      INTERNAL_API_TOKEN: INTERNAL_TOKEN,
      METRICS_TOKEN: 'graceful-shutdown-metrics-token-0123456789ab',
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION: 'i-understand-the-ssrf-risk', // the receiver is on loopback
      WEBHOOK_EXTRA_CA_FILE: join(dir, 'receiver-ca.pem'),
      DELIVERY_CONCURRENCY: String(CONCURRENCY),
      DELIVERY_TIMEOUT_MS: '1500',
    });
  });
  afterAll(async () => {
    service.child.kill('SIGKILL');
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('finishes the attempts in flight, starts no new ones, releases the other leases and exits', async () => {
    const settings = await fetch(`${service.baseUrl}/api/v1/settings/notifications`, {
      method: 'PUT',
      headers: {
        Authorization: `Bearer ${signUserToken(JWT_SECRET, 7, undefined, { issuer: 'https://funding.example.com', audience: 'notification-settings' })}`,
        'Content-Type': 'application/json',
      },
      body: JSON.stringify({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: receiver.url('/slow') }),
    });
    expect(settings.status).toBe(200);
    receiver.respondWith('hang');
    const events = Array.from({ length: EVENTS }, (_, i) => ({
      userId: 7,
      type: 'RATE_SPIKE',
      severity: 'INFO',
      title: `Spike ${i}`,
      body: 'USD',
    }));
    const published = await fetch(`${service.baseUrl}/api/v1/internal/notifications/events`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${INTERNAL_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ events }),
    });
    expect(published.status).toBe(202);
    await receiver.waitForRequests(CONCURRENCY);

    service.child.kill('SIGTERM');
    const exit = await service.exited;

    expect(exit, service.output()).toEqual({ code: 0, signal: null });
    const shutdown = jsonLogLines(service.output())
      .filter((line) => line.context === 'Shutdown' || line.msg.startsWith('Shutdown:'))
      .map((line) => line.msg);
    expect(shutdown).toEqual([
      'Received SIGTERM; stopping: readiness 503, then draining the deliveries in flight',
      `Shutdown: draining ${CONCURRENCY} attempt(s) in flight (waiting at most 10000 ms)`,
      `Shutdown: released ${EVENTS - CONCURRENCY} deliveries for other instances`,
      expect.stringMatching(new RegExp(`^Shutdown: drained; ${CONCURRENCY} attempt\\(s\\) finished and recorded in \\d+ ms$`)),
      expect.stringMatching(/^Stopped in \d+ ms$/),
    ]);
    expect(receiver.requests).toHaveLength(CONCURRENCY);
    const db = new Database(join(dir, 'notifications.sqlite'), { readonly: true });
    const rows = db.prepare('SELECT status, attempt_count AS attempts, locked_by AS lockedBy FROM webhook_deliveries').all() as {
      status: string;
      attempts: number;
      lockedBy: string | null;
    }[];
    const attempts = db.prepare('SELECT outcome FROM webhook_delivery_attempts').all() as { outcome: string }[];
    db.close();
    expect(rows).toHaveLength(EVENTS);
    expect(rows.every((row) => row.status === 'PENDING' && row.lockedBy === null)).toBe(true);
    expect(rows.filter((row) => row.attempts === 1)).toHaveLength(CONCURRENCY);
    expect(attempts).toEqual(Array.from({ length: CONCURRENCY }, () => ({ outcome: 'timeout' })));
  });
});
