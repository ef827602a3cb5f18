import type { NotificationsModuleOptions } from '../../src/notifications/notifications-options.interface';
import { WebhookAutoDisable } from '../../src/notifications/auto-disable/webhook-auto-disable.service';
import { describeEachDatabase } from '../support/each-database';
import { startTestAppWithKit } from '../support/test-app-with-kit';
import { DELIVERIES, SETTINGS } from '../support/settings-api';

const HOUR = 60 * 60_000;

describeEachDatabase('webhook auto-disable on $name', (kind) => {
  let user = 0;

  /** An app with its own receiver, a user, and the steps a test drives them through. */
  const scenario = async (options: Partial<NotificationsModuleOptions>) => {
    const t = await startTestAppWithKit(kind, options);
    const userId = ++user;
    const settled = async () => {
      await t.settle();
      await t.app.get(WebhookAutoDisable).idle();
    };
    const steps = {
      receiver: t.receiver,
      clock: t.clock,
      close: () => t.close(),
      enable: (type: string) =>
        t
          .http()
          .put(SETTINGS)
          .set('Authorization', t.bearer(userId))
          .send({ type, channel: 'WEBHOOK', enabled: true, webhookUrl: t.receiver.url(`/u${userId}`) })
          .expect(200),
      publish: async (type: string, count = 1) => {
        const events = Array.from({ length: count }, () => ({
          userId,
          type,
          severity: 'ERROR',
          title: 'Strategy error',
          body: 'boom',
          payload: {},
        }));
        await t.publish({ events }).expect(202);
        await settled();
      },
      /** Walks the clock through the retry schedule: `rounds` more attempts (5: all) of every pending delivery. */
      retry: async (rounds = 5) => {
        for (let i = 0; i < rounds; i++) {
          t.advance(5 * HOUR);
          await t.runScheduler();
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
        const page = await t.http().get(`${DELIVERIES}?type=${type}&limit=100`).set('Authorization', t.bearer(userId)).expect(200);
        return page.body.data.map((d: { status: string }) => d.status).sort();
      },
    };
    return steps;
  };

  it('disables the type after N deliveries in a row end FAILED, shows why, queues nothing more, and re-enabling clears it', async () => {
    const s = await scenario({ autoDisableAfterFailures: 3 });
    try {
      await s.enable('STRATEGY_ERROR');
      s.receiver.respondWith({ status: 500 });
      await s.publish('STRATEGY_ERROR', 3);
      await s.retry();
      const disabledAt = new Date(s.clock.now()).toISOString();
      const reason = `disabled after 3 consecutive failed deliveries on ${disabledAt}`;

      expect(await s.webhookRow('STRATEGY_ERROR')).toMatchObject({
        enabled: false,
        source: 'USER',
        hasWebhookSecret: true,
        disabledReasonCode: 'CONSECUTIVE_FAILURES',
        disabledReason: reason,
      });
      expect(await s.listed('STRATEGY_ERROR')).toMatchObject({
        enabled: false,
        disabledReasonCode: 'CONSECUTIVE_FAILURES',
        disabledReason: reason,
      });

      await s.publish('STRATEGY_ERROR');
      expect(await s.statuses('STRATEGY_ERROR')).toEqual(['FAILED', 'FAILED', 'FAILED']);

      const reenabled = await s.enable('STRATEGY_ERROR');
      expect(reenabled.body).toMatchObject({ enabled: true });
      expect(reenabled.body).not.toHaveProperty('disabledReason');
      expect(reenabled.body).not.toHaveProperty('disabledReasonCode');
      expect(await s.webhookRow('STRATEGY_ERROR')).not.toHaveProperty('disabledReason');
      expect(await s.webhookRow('STRATEGY_ERROR')).not.toHaveProperty('disabledReasonCode');

      s.receiver.respondWith({ status: 204 });
      await s.publish('STRATEGY_ERROR');
      expect(await s.statuses('STRATEGY_ERROR')).toEqual(['DELIVERED', 'FAILED', 'FAILED', 'FAILED']);
    } finally {
      await s.close();
    }
  });

  it('cancels a delivery still retrying when its type gets disabled', async () => {
    const s = await scenario({ autoDisableAfterFailures: 1 });
    try {
      await s.enable('API_KEY_INVALID');
      s.receiver.respondWith({ status: 500 });
      await s.publish('API_KEY_INVALID');
      await s.retry(4);
      await s.publish('API_KEY_INVALID');
      await s.retry(1);
      expect(await s.statuses('API_KEY_INVALID')).toEqual(['FAILED', 'PENDING']);
      await s.retry(1);
      expect(await s.webhookRow('API_KEY_INVALID')).toMatchObject({
        enabled: false,
        disabledReason: expect.stringMatching(/^disabled after 1 consecutive failed deliveries on /),
      });
      expect(await s.statuses('API_KEY_INVALID')).toEqual(['CANCELLED', 'FAILED']);
    } finally {
      await s.close();
    }
  });

  it('counts only failures in a row: a DELIVERED in between resets the count', async () => {
    const s = await scenario({ autoDisableAfterFailures: 3 });
    try {
      await s.enable('RATE_DROP');
      s.receiver.respondWith({ status: 500 });
      await s.publish('RATE_DROP', 2);
      await s.retry();
      s.receiver.respondWith({ status: 204 });
      await s.publish('RATE_DROP');
      s.receiver.respondWith({ status: 500 });
      await s.publish('RATE_DROP', 2);
      await s.retry();
      expect(await s.webhookRow('RATE_DROP')).toMatchObject({ enabled: true });
      expect(await s.webhookRow('RATE_DROP')).not.toHaveProperty('disabledReason');

      await s.publish('RATE_DROP');
      await s.retry();
      expect(await s.webhookRow('RATE_DROP')).toMatchObject({
        enabled: false,
        disabledReason: expect.stringMatching(/^disabled after 3 consecutive/),
      });
    } finally {
      await s.close();
    }
  });

  it('is off by default', async () => {
    const s = await scenario({});
    try {
      await s.enable('LOW_UTILIZATION');
      s.receiver.respondWith({ status: 500 });
      await s.publish('LOW_UTILIZATION', 3);
      await s.retry();
      expect(await s.statuses('LOW_UTILIZATION')).toEqual(['FAILED', 'FAILED', 'FAILED']);
      expect(await s.webhookRow('LOW_UTILIZATION')).toMatchObject({ enabled: true });
    } finally {
      await s.close();
    }
  });
});
