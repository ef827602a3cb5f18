// The "Testing your integration" example of docs/host-apps.md, verbatim: keep the two in step.
import { EventType, Severity } from '@funding/notification-webhooks';
import { bootTestNotifications, type TestNotifications } from '@funding/notification-webhooks/testing';
import request from 'supertest';

describe('loan notifications', () => {
  let kit: TestNotifications;

  beforeAll(async () => {
    kit = await bootTestNotifications(); // NotificationsModule on in-memory SQLite, a loopback HTTPS receiver, a test clock
  });
  afterAll(() => kit.close());
  beforeEach(() => kit.receiver.clear());

  const loanExecuted = (userId: number) => ({
    userId,
    type: EventType.LOAN_EXECUTED,
    severity: Severity.INFO,
    title: 'Loan executed',
    body: '1000 USD lent at 0.02%/day for 2 days',
    payload: { amount: 1000, currency: 'USD' },
  });

  it('delivers a signed LOAN_EXECUTED event', async () => {
    const secret = await kit.enableWebhook(42, EventType.LOAN_EXECUTED); // points at kit.receiver.url('/hook')
    await kit.publisher.publish(loanExecuted(42)); // or call your own service that publishes

    const [hook] = await kit.waitForDelivery({ userId: 42, type: 'LOAN_EXECUTED' });
    expect(hook.isSignedWith(secret)).toBe(true);
    expect(hook.json()).toMatchObject({ type: 'LOAN_EXECUTED', userId: 42, payload: { amount: 1000 } });
  });

  it('retries a failing endpoint on the schedule, 6 attempts in all, then marks the delivery FAILED', async () => {
    await kit.enableWebhook(7, EventType.LOAN_EXECUTED);
    kit.receiver.respondWith({ status: 503 });
    await kit.publisher.publish(loanExecuted(7));
    await kit.waitForDelivery({ userId: 7 });

    for (const minutes of [1, 5, 15, 60, 240]) {
      kit.advance(minutes * 60_000);
      await kit.runScheduler();
    }

    const attempts = await kit.waitForDelivery({ userId: 7, count: 6 });
    expect(attempts.map((hook) => hook.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    const log = await request(kit.app.getHttpServer())
      .get('/api/v1/settings/notifications/webhook-deliveries')
      .set('Authorization', kit.bearer(7))
      .expect(200);
    expect(log.body.data[0]).toMatchObject({ status: 'FAILED', attemptCount: 6 });
  });
});
