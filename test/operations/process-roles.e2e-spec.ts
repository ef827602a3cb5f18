import { DeliveryStatus, WebhookDelivery } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { SETTINGS } from '../support/settings-api';

describeEachDatabase('an api process on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { role: 'api' });
  const userId = 5;

  beforeAll(async () => {
    await t.enableWebhook(userId, 'RATE_SPIKE', '/api-role');
  });

  const event = { userId, type: 'RATE_SPIKE', severity: 'INFO', title: 'Spike', body: 'USD' };
  const deliveries = () => t.dataSource.getRepository(WebhookDelivery).findBy({ userId });

  it('stores published deliveries due and free for the workers, and sends nothing, not even on a scheduler run', async () => {
    await t.publish({ events: [event, event] }).expect(202);
    expect(await t.runScheduler()).toBe(0);

    expect(t.receiver.requests).toHaveLength(0);
    const stored = await deliveries();
    expect(stored).toHaveLength(2);
    for (const delivery of stored) {
      expect(delivery.status).toBe(DeliveryStatus.PENDING);
      expect(delivery.attemptCount).toBe(0);
      expect(delivery.nextAttemptAt).toBeLessThanOrEqual(t.clock.now());
      expect(delivery.lockedUntil ?? 0).toBeLessThanOrEqual(t.clock.now()); // any worker may claim it now
    }
  });

  it('serves the settings API and the delivery log', async () => {
    const page = await t.http().get(`${SETTINGS}/webhook-deliveries`).set('Authorization', t.bearer(userId)).expect(200);
    expect(page.body.data).toHaveLength(2);
  });
});

describeEachDatabase('a worker process on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { role: 'worker' });

  it('answers 404 on the settings and internal routes, naming its role', async () => {
    const settings = await t.http().get(SETTINGS).set('Authorization', t.bearer(1)).expect(404);
    expect(settings.body.message).toContain('runs as a worker');
    await t.publish({ userId: 1, type: 'RATE_SPIKE', severity: 'INFO', title: 'x', body: 'y' }).expect(404);
  });

  it('delivers through the publisher its host code calls', async () => {
    await t.enableWebhook(9, 'RATE_SPIKE', '/worker');
    await t.publisher.publish({ userId: 9, type: 'RATE_SPIKE' as never, severity: 'INFO' as never, title: 'from the host', body: 'x' });
    const [hook] = await t.waitForDelivery({ userId: 9 });
    expect(hook.path).toBe('/worker');
  });
});
