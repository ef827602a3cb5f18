import type { NotificationsModuleOptions } from '../src/notifications/notifications-options.interface';
import { DeliveryWorker } from '../src/notifications/delivery/delivery-worker';
import { WebhookAutoDisable } from '../src/notifications/preferences/auto-disable/webhook-auto-disable';
import { DeliveryScheduler } from '../src/notifications/scheduler/delivery-scheduler';
import { FakeClock } from './support/fake-clock';
import { startTestApp, type TestApp } from './support/test-app';
import { TEST_DATABASE_KINDS } from './support/test-databases';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver';

const SETTINGS = '/api/v1/settings/notifications';
const EVENTS = '/api/v1/internal/notifications/events';
const INTERNAL_TOKEN = 'internal-token-0123456789abcdef0123456789';
const HOUR = 60 * 60_000;

describe.each(TEST_DATABASE_KINDS)('webhook auto-disable on $name', (kind) => {
  let receiver: WebhookReceiver;
  let user = 0;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver.close();
  });

  /** An app, a user and the steps a test drives them through. */
  const scenario = (options: Partial<NotificationsModuleOptions>) => {
    const clock = new FakeClock();
    let t: TestApp;
    const userId = ++user;
    const ready = startTestApp(kind, { allowedCidrs: ['127.0.0.0/8'], extraCaPem: receiver.caPem, clock, internalApiToken: INTERNAL_TOKEN, ...options }).then((app) => {
      t = app;
    });
    const settled = async () => {
      await t.app.get(DeliveryWorker).idle();
      await t.app.get(WebhookAutoDisable).idle();
    };
    const steps = {
      clock,
      ready,
      close: () => t.close(),
      enable: (type: string) =>
        t.http().put(SETTINGS).set('Authorization', t.bearer(userId)).send({ type, channel: 'WEBHOOK', enabled: true, webhookUrl: receiver.url(`/u${userId}`) }).expect(200),
      publish: async (type: string, count = 1) => {
        const events = Array.from({ length: count }, () => ({ userId, type, severity: 'ERROR', title: 'Strategy error', body: 'boom', payload: {} }));
        await t.http().post(EVENTS).set('Authorization', `Bearer ${INTERNAL_TOKEN}`).send({ events }).expect(202);
        await settled();
      },
      /** Walks the clock through the retry schedule: `rounds` more attempts (5: all) of every pending delivery. */
      retry: async (rounds = 5) => {
        for (let i = 0; i < rounds; i++) {
          clock.advance(5 * HOUR);
          await t.app.get(DeliveryScheduler).tick();
          await settled();
        }
      },
      webhookRow: async (type: string) => {
        const effective = await t.http().get(`${SETTINGS}/effective`).set('Authorization', t.bearer(userId)).expect(200);
        return effective.body.find((row: { type: string; channel: string }) => row.type === type && row.channel === 'WEBHOOK');
      },
      listed: async (type: string) => {
        const list = await t.http().get(SETTINGS).set('Authorization', t.bearer(userId)).expect(200);
        return list.body.find((row: { type: string; channel: string }) => row.type === type && row.channel === 'WEBHOOK');
      },
      statuses: async (type: string) => {
        const page = await t.http().get(`${SETTINGS}/webhook-deliveries?type=${type}&limit=100`).set('Authorization', t.bearer(userId)).expect(200);
        return page.body.data.map((d: { status: string }) => d.status).sort();
      },
    };
    return steps;
  };

  it('disables the type after N deliveries in a row end FAILED, shows why, queues nothing more, and re-enabling clears it', async () => {
    const s = scenario({ autoDisableAfterFailures: 3 });
    await s.ready;
    try {
      await s.enable('STRATEGY_ERROR');
      receiver.respondWith({ status: 500 });
      await s.publish('STRATEGY_ERROR', 3);
      await s.retry();
      const disabledAt = new Date(s.clock.now()).toISOString();
      const reason = `disabled after 3 consecutive failed deliveries on ${disabledAt}`;

      expect(await s.webhookRow('STRATEGY_ERROR')).toMatchObject({ enabled: false, source: 'USER', hasWebhookSecret: true, disabledReason: reason });
      expect(await s.listed('STRATEGY_ERROR')).toMatchObject({ enabled: false, disabledReason: reason });

      await s.publish('STRATEGY_ERROR');
      expect(await s.statuses('STRATEGY_ERROR')).toEqual(['FAILED', 'FAILED', 'FAILED']);

      const reenabled = await s.enable('STRATEGY_ERROR');
      expect(reenabled.body).toMatchObject({ enabled: true });
      expect(reenabled.body).not.toHaveProperty('disabledReason');
      expect(await s.webhookRow('STRATEGY_ERROR')).not.toHaveProperty('disabledReason');

      receiver.respondWith({ status: 204 });
      await s.publish('STRATEGY_ERROR');
      expect(await s.statuses('STRATEGY_ERROR')).toEqual(['DELIVERED', 'FAILED', 'FAILED', 'FAILED']);
    } finally {
      await s.close();
    }
  });

  it('cancels a delivery still retrying when its type gets disabled', async () => {
    const s = scenario({ autoDisableAfterFailures: 1 });
    await s.ready;
    try {
      await s.enable('API_KEY_INVALID');
      receiver.respondWith({ status: 500 });
      await s.publish('API_KEY_INVALID');
      await s.retry(4);
      await s.publish('API_KEY_INVALID');
      await s.retry(1);
      expect(await s.statuses('API_KEY_INVALID')).toEqual(['FAILED', 'PENDING']);
      await s.retry(1);
      expect(await s.webhookRow('API_KEY_INVALID')).toMatchObject({ enabled: false, disabledReason: expect.stringMatching(/^disabled after 1 consecutive failed deliveries on /) });
      expect(await s.statuses('API_KEY_INVALID')).toEqual(['CANCELLED', 'FAILED']);
    } finally {
      await s.close();
    }
  });

  it('counts only failures in a row: a DELIVERED in between resets the count', async () => {
    const s = scenario({ autoDisableAfterFailures: 3 });
    await s.ready;
    try {
      await s.enable('RATE_DROP');
      receiver.respondWith({ status: 500 });
      await s.publish('RATE_DROP', 2);
      await s.retry();
      receiver.respondWith({ status: 204 });
      await s.publish('RATE_DROP');
      receiver.respondWith({ status: 500 });
      await s.publish('RATE_DROP', 2);
      await s.retry();
      expect(await s.webhookRow('RATE_DROP')).toMatchObject({ enabled: true });
      expect(await s.webhookRow('RATE_DROP')).not.toHaveProperty('disabledReason');

      await s.publish('RATE_DROP');
      await s.retry();
      expect(await s.webhookRow('RATE_DROP')).toMatchObject({ enabled: false, disabledReason: expect.stringMatching(/^disabled after 3 consecutive/) });
    } finally {
      await s.close();
    }
  });

  it('is off by default', async () => {
    const s = scenario({});
    await s.ready;
    try {
      await s.enable('LOW_UTILIZATION');
      receiver.respondWith({ status: 500 });
      await s.publish('LOW_UTILIZATION', 3);
      await s.retry();
      expect(await s.statuses('LOW_UTILIZATION')).toEqual(['FAILED', 'FAILED', 'FAILED']);
      expect(await s.webhookRow('LOW_UTILIZATION')).toMatchObject({ enabled: true });
    } finally {
      await s.close();
    }
  });
});
