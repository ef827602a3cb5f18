import { randomBytes } from 'node:crypto';
import {
  attachNotificationsTestKit,
  notificationsTestOptions,
  type NotificationsTestKit,
  startTestReceiver,
  TestClock,
  type TestReceiver,
} from '@funding/notification-webhooks/testing';
import { DeliveryEvents, NotificationsMetrics, type WebhookHealthChanged } from '../../src';
import { WebhookAutoDisable } from '../../src/notifications/auto-disable/webhook-auto-disable.service';
import type { NotificationsModuleOptions } from '../../src/notifications/notifications-options.interface';
import { describeEachDatabase, describeEachServerDatabase } from '../support/each-database';
import { parsePrometheusText } from '../support/prometheus-text';
import { DELIVERIES, SETTINGS } from '../support/settings-api';
import { startTestAppOn, type TestApp } from '../support/test-app';
import { startTestAppWithKit, type TestAppWithKit } from '../support/test-app-with-kit';
import type { TestDatabase } from '../support/test-databases';

const HEALTH = `${SETTINGS}/webhook-health`;
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

interface HealthItem {
  type: string;
  state: string;
  failedAttemptsInRow: number;
  failingSince: string | null;
  lastAttempt?: { at: string; outcome: string; statusCode: number | null; error: string | null };
  lastSuccessAt: string | null;
  circuitOpenUntil: string | null;
  waitingDeliveries: number;
  [field: string]: unknown;
}

const event = (userId: number, type: string, title = 'Rate spike') => ({ userId, type, severity: 'WARNING', title, body: 'USD FRR 0.08%' });

describeEachDatabase('webhook health on $name', (kind) => {
  let user = 0;

  /** An app with its own receiver and clock, a fresh user, the health changes it emits, and the steps a test drives. */
  const scenario = async (options: Partial<NotificationsModuleOptions> = {}) => {
    const t: TestAppWithKit = await startTestAppWithKit(kind, options);
    const userId = ++user;
    const changes: WebhookHealthChanged[] = [];
    t.app.get(DeliveryEvents).webhookHealthChanged.subscribe((change) => changes.push(change));
    const settled = async () => {
      await t.settle();
      await t.app.get(WebhookAutoDisable).idle();
      await t.settle(); // a disable is reported through the health recorder after auto-disable stored it
    };
    return {
      t,
      userId,
      changes,
      kinds: () => changes.map((change) => `${change.change}: ${change.from} → ${change.to}`),
      publish: async (type: string, count = 1) => {
        await t.publish({ events: Array.from({ length: count }, (_, i) => event(userId, type, `Event ${i}`)) }).expect(202);
        await settled();
      },
      /** One scheduler run `ms` later. */
      retry: async (ms: number) => {
        t.advance(ms);
        await t.runScheduler();
        await settled();
      },
      /** The user's delivery log, newest first. */
      deliveries: async (): Promise<Record<string, unknown>[]> =>
        (await t.http().get(DELIVERIES).set('Authorization', t.bearer(userId)).expect(200)).body.data,
      health: async (type: string): Promise<HealthItem> => {
        const response = await t.http().get(HEALTH).set('Authorization', t.bearer(userId)).expect(200);
        const item = (response.body as HealthItem[]).find((row) => row.type === type);
        if (!item) throw new Error(`no health item for ${type}: ${JSON.stringify(response.body)}`);
        return item;
      },
      transitions: async () => {
        const samples = parsePrometheusText(await t.app.get(NotificationsMetrics).registry.metrics());
        return Object.fromEntries(
          ['HEALTHY', 'FAILING', 'CIRCUIT_OPEN', 'DISABLED'].map((to) => [to, samples.get(`webhook_health_transitions_total{to="${to}"}`)]),
        );
      },
    };
  };

  it('refreshes a clean webhook on a 2xx at most once a minute, and stores any other outcome at once', async () => {
    const s = await scenario();
    try {
      await s.t.enableWebhook(s.userId, 'RATE_SPIKE', `/u${s.userId}`);
      await s.publish('RATE_SPIKE');
      const first = new Date(s.t.clock.now()).toISOString();
      s.t.advance(30_000);
      await s.publish('RATE_SPIKE');
      expect(await s.health('RATE_SPIKE')).toMatchObject({ state: 'HEALTHY', lastSuccessAt: first });

      s.t.advance(30_000);
      await s.publish('RATE_SPIKE');
      const refreshed = new Date(s.t.clock.now()).toISOString();
      expect(await s.health('RATE_SPIKE')).toMatchObject({ lastSuccessAt: refreshed, lastAttempt: { at: refreshed } });

      s.t.advance(1_000);
      s.t.receiver.respondWith({ status: 500 });
      await s.publish('RATE_SPIKE');
      expect(await s.health('RATE_SPIKE')).toMatchObject({ failedAttemptsInRow: 1, lastAttempt: { statusCode: 500 } });
      s.t.advance(1_000);
      s.t.receiver.respondWith({ status: 204 });
      await s.publish('RATE_SPIKE');
      expect(await s.health('RATE_SPIKE')).toMatchObject({
        failedAttemptsInRow: 0,
        lastSuccessAt: new Date(s.t.clock.now()).toISOString(),
      });
    } finally {
      await s.t.close();
    }
  });

  it('reports healthy after a 2xx, failing after 3 failed attempts in a row, and recovered after the next 2xx, each change once', async () => {
    const s = await scenario();
    try {
      await s.t.enableWebhook(s.userId, 'RATE_SPIKE', `/u${s.userId}`);
      await s.publish('RATE_SPIKE');
      const healthy = await s.health('RATE_SPIKE');
      expect(healthy).toMatchObject({
        type: 'RATE_SPIKE',
        webhookUrl: s.t.receiver.url(`/u${s.userId}`),
        enabled: true,
        state: 'HEALTHY',
        failedAttemptsInRow: 0,
        failingSince: null,
        lastAttempt: { at: new Date(s.t.clock.now()).toISOString(), outcome: 'success', statusCode: 204, error: null },
        lastSuccessAt: new Date(s.t.clock.now()).toISOString(),
        circuitOpenUntil: null,
        disabledAt: null,
        waitingDeliveries: 0,
      });
      expect(healthy).not.toHaveProperty('disabledReason');

      s.t.advance(MINUTE);
      const failingSince = new Date(s.t.clock.now()).toISOString();
      s.t.receiver.respondWith({ status: 500 });
      await s.publish('RATE_SPIKE', 2);
      expect(await s.health('RATE_SPIKE')).toMatchObject({ state: 'HEALTHY', failedAttemptsInRow: 2, failingSince });
      s.t.receiver.respondWith({ status: 503 });
      await s.publish('RATE_SPIKE');
      expect(await s.health('RATE_SPIKE')).toMatchObject({
        state: 'FAILING',
        failedAttemptsInRow: 3,
        failingSince,
        lastAttempt: { outcome: 'http_error', statusCode: 503, error: expect.stringContaining('503') },
        waitingDeliveries: 3,
      });
      expect(s.kinds()).toEqual(['became_failing: HEALTHY → FAILING']);
      expect(s.changes[0]).toMatchObject({ userId: s.userId, type: 'RATE_SPIKE', failedAttemptsInRow: 3, lastStatusCode: 503 });

      s.t.receiver.respondWith({ status: 503 });
      await s.publish('RATE_SPIKE');
      expect((await s.health('RATE_SPIKE')).failedAttemptsInRow).toBe(4);
      expect(s.kinds()).toEqual(['became_failing: HEALTHY → FAILING']); // still failing: not reported again

      s.t.receiver.respondWith({ status: 204 });
      await s.retry(MINUTE);
      expect(await s.health('RATE_SPIKE')).toMatchObject({
        state: 'HEALTHY',
        failedAttemptsInRow: 0,
        failingSince: null,
        lastAttempt: { outcome: 'success', statusCode: 204 },
        lastSuccessAt: new Date(s.t.clock.now()).toISOString(),
        waitingDeliveries: 0,
      });
      expect(s.kinds()).toEqual(['became_failing: HEALTHY → FAILING', 'recovered: FAILING → HEALTHY']);
      expect(await s.transitions()).toEqual({ HEALTHY: 1, FAILING: 1, CIRCUIT_OPEN: 0, DISABLED: 0 });
    } finally {
      await s.t.close();
    }
  });

  it("starts a new URL healthy: changing a failing webhook's URL clears its failures; saving the same URL keeps them", async () => {
    const s = await scenario();
    try {
      await s.t.enableWebhook(s.userId, 'RATE_SPIKE', `/old${s.userId}`);
      s.t.receiver.respondWith({ status: 503 });
      await s.publish('RATE_SPIKE', 3);
      expect(await s.health('RATE_SPIKE')).toMatchObject({ state: 'FAILING', failedAttemptsInRow: 3 });

      await s.t.enableWebhook(s.userId, 'RATE_SPIKE', `/old${s.userId}`); // the same URL again: nothing changed
      await s.t.settle();
      expect(await s.health('RATE_SPIKE')).toMatchObject({ state: 'FAILING', failedAttemptsInRow: 3 });

      await s.t.enableWebhook(s.userId, 'RATE_SPIKE', `/new${s.userId}`); // before the old deliveries' retries are due
      await s.t.settle();
      const fresh = await s.health('RATE_SPIKE');
      expect(fresh).toMatchObject({
        webhookUrl: s.t.receiver.url(`/new${s.userId}`),
        state: 'HEALTHY',
        failedAttemptsInRow: 0,
        failingSince: null,
        lastSuccessAt: null,
        circuitOpenUntil: null,
      });
      expect(fresh).not.toHaveProperty('lastAttempt'); // the last attempt went to the old URL
      expect(s.kinds()).toEqual(['became_failing: HEALTHY → FAILING', 'recovered: FAILING → HEALTHY']);

      s.t.receiver.respondWith({ status: 503 }); // the new URL's own failures count from zero
      await s.publish('RATE_SPIKE');
      expect(await s.health('RATE_SPIKE')).toMatchObject({ state: 'HEALTHY', failedAttemptsInRow: 1 });
    } finally {
      await s.t.close();
    }
  });

  it('does not count against a new URL an attempt to the old one that was in flight when the URL changed', async () => {
    const s = await scenario({ healthFailingAfterAttempts: 1, delivery: { timeoutMs: 1500 } });
    try {
      const [oldPath, newPath] = [`/old${s.userId}`, `/new${s.userId}`];
      await s.t.enableWebhook(s.userId, 'RATE_SPIKE', oldPath);
      s.t.receiver.respondWith('hang', { path: oldPath });
      await s.t.publish({ events: [event(s.userId, 'RATE_SPIKE')] }).expect(202);
      await s.t.receiver.waitForDelivery({ path: oldPath }); // the attempt hangs at the old URL
      await s.t.enableWebhook(s.userId, 'RATE_SPIKE', newPath);
      await s.t.settle(); // the old URL's attempt times out, after the change
      expect((await s.deliveries())[0]).toMatchObject({ attemptCount: 1, lastError: 'timed out after 1500 ms' });

      const fresh = await s.health('RATE_SPIKE');
      expect(fresh).toMatchObject({ webhookUrl: s.t.receiver.url(newPath), state: 'HEALTHY', failedAttemptsInRow: 0, failingSince: null });
      expect(fresh).not.toHaveProperty('lastAttempt');
      expect(s.kinds()).toEqual([]);

      s.t.receiver.respondWith({ status: 503 }, { path: newPath }); // the retry goes to the new URL: that failure is its own
      await s.retry(MINUTE);
      expect(await s.health('RATE_SPIKE')).toMatchObject({ state: 'FAILING', failedAttemptsInRow: 1, lastAttempt: { statusCode: 503 } });
    } finally {
      await s.t.close();
    }
  });

  it('does not auto-disable a new URL for a delivery whose last attempt, in flight at the change, went to the old one', async () => {
    const s = await scenario({ autoDisableAfterFailures: 1, delivery: { timeoutMs: 1500 } });
    try {
      const [oldPath, newPath] = [`/old${s.userId}`, `/new${s.userId}`];
      await s.t.enableWebhook(s.userId, 'STRATEGY_ERROR', oldPath);
      s.t.receiver.respondWith({ status: 500 }, { path: oldPath });
      await s.publish('STRATEGY_ERROR');
      for (let attempt = 2; attempt <= 5; attempt++) await s.retry(5 * HOUR);
      s.t.receiver.respondWith('hang', { path: oldPath });
      s.t.advance(5 * HOUR);
      const lastAttempt = s.t.runScheduler(); // the 6th and last attempt hangs at the old URL
      await s.t.receiver.waitForDelivery({ path: oldPath, count: 6 });
      await s.t.enableWebhook(s.userId, 'STRATEGY_ERROR', newPath);
      await lastAttempt;
      await s.t.app.get(WebhookAutoDisable).idle();
      await s.t.settle();
      expect((await s.deliveries())[0]).toMatchObject({ status: 'FAILED', attemptCount: 6 });

      expect(await s.health('STRATEGY_ERROR')).toMatchObject({ webhookUrl: s.t.receiver.url(newPath), enabled: true, state: 'HEALTHY' });
      expect(s.kinds()).not.toContain('disabled: FAILING → DISABLED');
    } finally {
      await s.t.close();
    }
  });

  it('reports the circuit open, until when, and how many deliveries wait; a 2xx after the cool-down closes it', async () => {
    const coolDownMs = 10 * MINUTE;
    const s = await scenario({
      delivery: { perEndpointConcurrency: 1, timeoutMs: 200, leaseMs: 20_000, circuitBreaker: { failuresToOpen: 1, coolDownMs } },
    });
    try {
      await s.t.enableWebhook(s.userId, 'LOAN_EXECUTED', '/dead');
      s.t.receiver.respondWith('hang', { path: '/dead' });
      await s.publish('LOAN_EXECUTED', 3);
      const health = await s.health('LOAN_EXECUTED');
      expect(health).toMatchObject({
        state: 'CIRCUIT_OPEN',
        failedAttemptsInRow: 1, // the timeout; the two skipped attempts are not failures of the receiver
        lastAttempt: { outcome: 'timeout', statusCode: null },
        waitingDeliveries: 3,
      });
      const until = Date.parse(health.circuitOpenUntil!);
      expect(until).toBeGreaterThan(s.t.clock.now());
      expect(until).toBeLessThanOrEqual(s.t.clock.now() + coolDownMs + 1_000);
      expect(s.kinds()).toEqual(['circuit_opened: HEALTHY → CIRCUIT_OPEN']);
      expect(s.changes[0].circuitOpenUntil).toBe(until);

      s.t.receiver.respondWith({ status: 204 }, { path: '/dead' });
      await s.retry(HOUR); // past every retry's due time and the cool-down: the probe is answered, the rest follow
      await s.retry(MINUTE);
      expect(await s.health('LOAN_EXECUTED')).toMatchObject({ state: 'HEALTHY', circuitOpenUntil: null, waitingDeliveries: 0 });
      expect(s.kinds()).toEqual(['circuit_opened: HEALTHY → CIRCUIT_OPEN', 'circuit_closed: CIRCUIT_OPEN → HEALTHY']);
      expect(await s.transitions()).toMatchObject({ CIRCUIT_OPEN: 1, HEALTHY: 1 });
    } finally {
      await s.t.close();
    }
  });

  it('reports a webhook auto-disable turned off as DISABLED with the reason, once, and one the user turned off as OFF', async () => {
    const s = await scenario({ autoDisableAfterFailures: 1 });
    try {
      await s.t.enableWebhook(s.userId, 'STRATEGY_ERROR');
      await s.t.enableWebhook(s.userId, 'RATE_DROP');
      await s.t
        .http()
        .put(SETTINGS)
        .set('Authorization', s.t.bearer(s.userId))
        .send({ type: 'RATE_DROP', channel: 'WEBHOOK', enabled: false })
        .expect(200);
      s.t.receiver.respondWith({ status: 500 });
      await s.publish('STRATEGY_ERROR');
      for (let attempt = 2; attempt <= 6; attempt++) await s.retry(5 * HOUR);

      const health = await s.health('STRATEGY_ERROR');
      expect(health).toMatchObject({
        enabled: false,
        state: 'DISABLED',
        disabledReasonCode: 'CONSECUTIVE_FAILURES',
        disabledReason: expect.stringMatching(/^disabled after 1 consecutive failed deliveries on /),
        disabledAt: new Date(s.t.clock.now()).toISOString(),
        failedAttemptsInRow: 6,
        lastAttempt: { statusCode: 500 },
        waitingDeliveries: 0,
      });
      expect(s.kinds()).toEqual(['became_failing: HEALTHY → FAILING', 'disabled: FAILING → DISABLED']);
      expect(await s.transitions()).toMatchObject({ FAILING: 1, DISABLED: 1 });
      const off = await s.health('RATE_DROP');
      expect(off).toMatchObject({ enabled: false, state: 'OFF', failedAttemptsInRow: 0 });
      expect(off).not.toHaveProperty('lastAttempt');
    } finally {
      await s.t.close();
    }
  });

  it('takes the threshold from the module option', async () => {
    const s = await scenario({ healthFailingAfterAttempts: 1 });
    try {
      await s.t.enableWebhook(s.userId, 'RATE_SPIKE');
      s.t.receiver.respondWith({ status: 404 });
      await s.publish('RATE_SPIKE');
      expect(await s.health('RATE_SPIKE')).toMatchObject({ state: 'FAILING', failedAttemptsInRow: 1, lastAttempt: { statusCode: 404 } });
      expect(s.kinds()).toEqual(['became_failing: HEALTHY → FAILING']);
    } finally {
      await s.t.close();
    }
  });

  it('lists nothing for a user without webhooks, and answers 401 without a token', async () => {
    const s = await scenario();
    try {
      expect((await s.t.http().get(HEALTH).set('Authorization', s.t.bearer(s.userId)).expect(200)).body).toEqual([]);
      await s.t.http().get(HEALTH).expect(401);
    } finally {
      await s.t.close();
    }
  });
});

// Two instances, each with its own pool, one database: each records its own attempts and writes the same health row.
describeEachServerDatabase('webhook health of two instances sharing $name', (kind) => {
  let database: TestDatabase;
  let receiver: TestReceiver;
  let instances: TestApp[];
  let kits: NotificationsTestKit[];
  const changes: WebhookHealthChanged[] = [];

  beforeAll(async () => {
    database = await kind.create();
    receiver = await startTestReceiver();
    const clock = new TestClock();
    const options = { ...notificationsTestOptions({ receiver, clock }), encryptionKeys: [{ id: 'shared', key: randomBytes(32) }] };
    instances = [await startTestAppOn(database, options), await startTestAppOn({ ...database, drop: async () => undefined }, options)];
    kits = instances.map((instance) => attachNotificationsTestKit(instance.app, { receiver, clock }));
    for (const instance of instances) instance.app.get(DeliveryEvents).webhookHealthChanged.subscribe((change) => changes.push(change));
  });

  afterAll(async () => {
    await instances[1]?.close();
    await instances[0]?.close();
    await receiver.close();
  });

  it('reports "became failing" once across instances, and counts every failed attempt of both', async () => {
    await kits[0].enableWebhook(9, 'RATE_SPIKE', '/shared');
    receiver.respondWith({ status: 503 });
    const perInstance = 5;
    await Promise.all(
      kits.map((kit, i) =>
        Promise.all(Array.from({ length: perInstance }, (_, n) => kit.publisher.publish(event(9, 'RATE_SPIKE', `i${i} e${n}`) as never))),
      ),
    );
    await Promise.all(kits.map((kit) => kit.settle()));
    // What the instance that does not own the user's partition published waits in the outbox for its owner's claim.
    await Promise.all(kits.map((kit) => kit.runScheduler()));
    await Promise.all(kits.map((kit) => kit.settle()));

    expect(receiver.requests).toHaveLength(2 * perInstance);
    expect(changes.map((change) => change.change)).toEqual(['became_failing']);
    const metrics = await Promise.all(
      instances.map(async (instance) => parsePrometheusText(await instance.app.get(NotificationsMetrics).registry.metrics())),
    );
    expect(metrics.reduce((sum, samples) => sum + samples.get('webhook_health_transitions_total{to="FAILING"}')!, 0)).toBe(1);
    const [row] = await instances[1].dataSource.query('SELECT failed_attempts_in_row AS failed FROM webhook_health WHERE user_id = 9');
    expect(Number(row.failed)).toBe(2 * perInstance);
  });
});
