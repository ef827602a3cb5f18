import { EventType, Severity } from '@funding/notification-webhooks';
import { bootTestNotifications, type TestNotifications } from '@funding/notification-webhooks/testing';
import request from 'supertest';
import { databaseOptions } from '../../src/service/database/database-options';
import { describeEachDatabase } from '../support/each-database';
import type { TestDatabase } from '../support/test-databases';
import { DELIVERIES } from '../support/settings-api';

describeEachDatabase('testing kit on $name', (kind) => {
  let database: TestDatabase;
  let kit: TestNotifications;
  let userId = 0;

  beforeAll(async () => {
    database = await kind.create();
    kit = await bootTestNotifications({ database: databaseOptions(database.config), module: { delivery: { timeoutMs: 300 } } });
  });
  afterAll(async () => {
    await kit.close();
    await database.drop();
  });
  beforeEach(() => {
    userId++;
    kit.receiver.clear();
  });

  const publish = () =>
    kit.publisher.publish({ userId, type: EventType.RATE_SPIKE, severity: Severity.WARNING, title: 'Rate spike', body: 'USD 0.08%' });
  const attemptsLog = async () => {
    const page = await request(kit.app.getHttpServer()).get(DELIVERIES).set('Authorization', kit.bearer(userId)).expect(200);
    const detail = await request(kit.app.getHttpServer())
      .get(`${DELIVERIES}/${page.body.data[0].id}`)
      .set('Authorization', kit.bearer(userId))
      .expect(200);
    return detail.body as { status: string; attempts: Array<{ outcome: string; statusCode: number | null }> };
  };

  it('walks an event through all 6 attempts (5 h 21 min of retry delays) without waiting for them', async () => {
    await kit.enableWebhook(userId, EventType.RATE_SPIKE);
    kit.receiver.respondWith({ status: 500 });
    await publish();
    await kit.waitForDelivery({ userId });
    const started = performance.now();
    for (const minutes of [1, 5, 15, 60, 240]) {
      kit.advance(minutes * 60_000 - 1);
      expect(await kit.runScheduler()).toBe(0);
      kit.advance(1);
      expect(await kit.runScheduler()).toBe(1);
    }
    const elapsedMs = performance.now() - started;
    console.log(`[testing kit on ${kind.name}] attempts 2-6 over 5 h 21 min of test clock in ${elapsedMs.toFixed(0)} ms`);
    expect((await attemptsLog()).status).toBe('FAILED');
    expect(elapsedMs).toBeLessThan(5000);
  });

  it('answers per call as told, and the module records each outcome', async () => {
    await kit.enableWebhook(userId, EventType.RATE_SPIKE, '/flaky');
    kit.receiver.respondNext([{ status: 200, delayMs: 1000 }, 'reset', { redirectTo: 'https://elsewhere.example/' }], { path: '/flaky' });
    await publish();
    await kit.waitForDelivery({ userId });
    for (let attempt = 2; attempt <= 4; attempt++) {
      kit.advance(4 * 3600_000);
      await kit.runScheduler();
    }
    const log = await attemptsLog();
    expect(log.attempts.map((a) => a.outcome)).toEqual(['timeout', 'connect_error', 'http_error', 'success']);
    expect(log.attempts.map((a) => a.statusCode)).toEqual([null, 200, 302, 204]); // the reset came after a 200 status line
    expect(log.status).toBe('DELIVERED');
  });
});
