import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { register as globalRegister, Registry } from 'prom-client';
import { NOTIFICATIONS_ENTITIES, NOTIFICATIONS_MIGRATIONS, NotificationsMetrics, NotificationsModule } from '../../src';
import { QUEUE_DEPTH_INTERVAL_MS } from '../../src/notifications/metrics/notifications-metrics.service';
import { databaseOptions } from '../../src/service/database/database-options';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { parsePrometheusText } from '../support/prometheus-text';
import { startTestApp } from '../support/test-app';
import type { TestDatabase } from '../support/test-databases';
import { SETTINGS } from '../support/settings-api';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789ab';
const MINUTE = 60_000;

describeEachDatabase('metrics on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { delivery: { timeoutMs: 1500 } }, { config: { metricsToken: METRICS_TOKEN } });
  let user = 0;
  let userId: number;

  beforeEach(() => {
    userId = ++user;
    t.receiver.clear();
  });

  const scrape = async () => {
    t.advance(QUEUE_DEPTH_INTERVAL_MS); // each scrape here wants a fresh count of the queue, not the last one
    const response = await t.http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    const samples = parsePrometheusText(response.text);
    return (series: string) => {
      const value = samples.get(series);
      if (value === undefined) throw new Error(`no series ${series} in /metrics`);
      return value;
    };
  };
  /** How much each series moved between two scrapes. */
  const moved = async (before: (series: string) => number, series: readonly string[]) => {
    const after = await scrape();
    return Object.fromEntries(series.map((s) => [s, after(s) - before(s)]));
  };
  const enable = () => t.enableWebhook(userId, 'RATE_SPIKE', `/u${userId}`);
  const publish = () => t.publish({ userId, type: 'RATE_SPIKE', severity: 'WARNING', title: 'Rate spike', body: 'USD' }).expect(202);

  it('serves the Prometheus text format only with the metrics token', async () => {
    const anonymous = await t.http().get('/metrics').expect(401);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(anonymous.body).toMatchObject({ statusCode: 401, message: 'A valid metrics token is required' });
    await t.http().get('/metrics').set('Authorization', 'Bearer wrong-token').expect(401);
    await t.http().get('/metrics').set('Authorization', t.bearer(userId)).expect(401);

    const response = await t.http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    for (const type of [
      '# TYPE webhook_attempts_total counter',
      '# TYPE webhook_attempt_duration_seconds histogram',
      '# TYPE webhook_deliveries_finished_total counter',
      '# TYPE webhook_queue_depth gauge',
      '# TYPE webhook_scheduler_tick_duration_seconds histogram',
      '# TYPE webhook_scheduler_claimed_total counter',
      '# TYPE process_resident_memory_bytes gauge',
    ]) {
      expect(response.text).toContain(type);
    }
    const samples = parsePrometheusText(response.text);
    for (const outcome of ['success', 'http_error', 'timeout', 'connect_error', 'blocked', 'tls_error']) {
      expect(samples.get(`webhook_attempts_total{outcome="${outcome}"}`)).toBeGreaterThanOrEqual(0);
    }
  });

  it('serves exactly the webhook_* metrics docs/operations.md lists, with their types', async () => {
    const documented = [
      ...readFileSync(join(__dirname, '..', '..', 'docs', 'operations.md'), 'utf8').matchAll(/^\| `(webhook_\w+)` \| (\w+) \|/gm),
    ];
    const response = await t.http().get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    const served = [...response.text.matchAll(/^# TYPE (webhook_\w+) (\w+)$/gm)];
    expect(new Map(served.map(([, name, type]) => [name, type]))).toEqual(new Map(documented.map(([, name, type]) => [name, type])));
  });

  it('serves the metrics to anyone when no metrics token is configured', async () => {
    const open = await startTestApp(kind);
    try {
      const response = await open.http().get('/metrics').expect(200);
      expect(response.text).toContain('# TYPE webhook_attempts_total counter');
    } finally {
      await open.close();
    }
  });

  it('counts a delivered attempt and its duration', async () => {
    await enable();
    const before = await scrape();
    await publish();
    await t.waitForDelivery({ userId });
    expect(
      await moved(before, [
        'webhook_attempts_total{outcome="success"}',
        'webhook_attempts_total{outcome="http_error"}',
        'webhook_attempt_duration_seconds_count{outcome="success"}',
        'webhook_deliveries_finished_total{state="DELIVERED"}',
      ]),
    ).toEqual({
      'webhook_attempts_total{outcome="success"}': 1,
      'webhook_attempts_total{outcome="http_error"}': 0,
      'webhook_attempt_duration_seconds_count{outcome="success"}': 1,
      'webhook_deliveries_finished_total{state="DELIVERED"}': 1,
    });
  });

  it('counts failures, the queue of due retries, scheduler runs and the final FAILED state', async () => {
    await enable();
    t.receiver.respondWith({ status: 500 });
    const before = await scrape();
    await publish();
    await t.waitForDelivery({ userId });

    const afterFirst = await scrape();
    expect(afterFirst('webhook_attempts_total{outcome="http_error"}') - before('webhook_attempts_total{outcome="http_error"}')).toBe(1);
    expect(afterFirst('webhook_queue_depth{state="due"}')).toBe(0);
    t.advance(MINUTE);
    expect((await scrape())('webhook_queue_depth{state="due"}')).toBe(1);

    expect(await t.runScheduler()).toBe(1);
    const afterTick = await scrape();
    expect(afterTick('webhook_queue_depth{state="due"}')).toBe(0);
    expect(afterTick('webhook_scheduler_claimed_total') - before('webhook_scheduler_claimed_total')).toBe(1);
    expect(afterTick('webhook_scheduler_tick_duration_seconds_count') - before('webhook_scheduler_tick_duration_seconds_count')).toBe(1);

    for (const minutes of [5, 15, 60, 240]) {
      t.advance(minutes * MINUTE);
      await t.runScheduler();
    }
    expect(
      await moved(before, [
        'webhook_attempts_total{outcome="http_error"}',
        'webhook_deliveries_finished_total{state="FAILED"}',
        'webhook_deliveries_finished_total{state="DELIVERED"}',
        'webhook_queue_depth{state="failed"}',
        'webhook_scheduler_claimed_total',
      ]),
    ).toEqual({
      'webhook_attempts_total{outcome="http_error"}': 6,
      'webhook_deliveries_finished_total{state="FAILED"}': 1,
      'webhook_deliveries_finished_total{state="DELIVERED"}': 0,
      'webhook_queue_depth{state="failed"}': 1,
      webhook_scheduler_claimed_total: 5,
    });
  });

  it('counts a retry cancelled because the webhook was disabled', async () => {
    await enable();
    t.receiver.respondWith({ status: 503 });
    await publish();
    await t.waitForDelivery({ userId });
    const before = await scrape();
    await t
      .http()
      .put(SETTINGS)
      .set('Authorization', t.bearer(userId))
      .send({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: false })
      .expect(200);
    t.advance(MINUTE);
    await t.runScheduler();
    expect(await moved(before, ['webhook_deliveries_finished_total{state="CANCELLED"}'])).toEqual({
      'webhook_deliveries_finished_total{state="CANCELLED"}': 1,
    });
    expect(t.receiver.requests.filter((request) => request.path === `/u${userId}`)).toHaveLength(1);
  });

  // Last: its timed-out delivery stays due for a retry that the ticks of a later test would make.
  it('shows an attempt in flight while the receiver holds it, then counts its timeout', async () => {
    await enable();
    t.receiver.respondWith('hang');
    const before = await scrape();
    await publish();
    await t.receiver.waitForDelivery({ userId });
    expect(await moved(before, ['webhook_queue_depth{state="in_flight"}', 'webhook_leases_held{step="send"}'])).toEqual({
      'webhook_queue_depth{state="in_flight"}': 1,
      'webhook_leases_held{step="send"}': 1,
    });
    await t.settle();
    expect(
      await moved(before, [
        'webhook_queue_depth{state="in_flight"}',
        'webhook_leases_held{step="send"}',
        'webhook_attempts_total{outcome="timeout"}',
      ]),
    ).toEqual({
      'webhook_queue_depth{state="in_flight"}': 0,
      'webhook_leases_held{step="send"}': 0,
      'webhook_attempts_total{outcome="timeout"}': 1,
    });
  });
});

describeEachDatabase('NotificationsModule metrics in a host app on $name', (kind) => {
  const bootHost = async (database: TestDatabase, metricsRegistry?: Registry) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        TypeOrmModule.forRoot({
          ...databaseOptions(database.config),
          entities: NOTIFICATIONS_ENTITIES,
          migrations: NOTIFICATIONS_MIGRATIONS,
          migrationsRun: true,
        }),
        NotificationsModule.forRoot({ jwtSecret: 'x'.repeat(32), encryptionKeys: [{ id: 'host', key: randomBytes(32) }], metricsRegistry }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    return app;
  };

  it('registers on the registry the host passes, and unregisters on close so the next app can', async () => {
    const database = await kind.create();
    const hostRegistry = new Registry();
    try {
      for (let boot = 1; boot <= 2; boot++) {
        const app = await bootHost(database, hostRegistry);
        expect(app.get(NotificationsMetrics).registry).toBe(hostRegistry);
        const samples = parsePrometheusText(await hostRegistry.metrics());
        expect(samples.get('webhook_queue_depth{state="due"}')).toBe(0);
        expect(samples.get('webhook_attempts_total{outcome="success"}')).toBe(0);
        await app.close();
        expect(await hostRegistry.metrics()).not.toContain('webhook_');
      }
    } finally {
      await database.drop();
    }
  });

  it('keeps the metrics on a registry of its own when the host passes none', async () => {
    const database = await kind.create();
    const app = await bootHost(database);
    try {
      const own = app.get(NotificationsMetrics).registry;
      expect(own).not.toBe(globalRegister);
      expect(await own.metrics()).toContain('webhook_queue_depth{state="failed"} 0');
      expect(await globalRegister.metrics()).not.toContain('webhook_');
    } finally {
      await app.close();
      await database.drop();
    }
  });
});
