import { randomUUID } from 'node:crypto';
import type { EventType } from '../src/notifications/catalog/event-catalog';
import { DeliveryOutboxRepository } from '../src/notifications/delivery/engine/delivery-outbox.repository';
import { OutboxEngine } from '../src/notifications/delivery/engine/outbox-engine';
import { NotificationsMetrics } from '../src/notifications/metrics/notifications-metrics';
import { startTestAppWithKit, type TestAppWithKit } from './support/test-app-with-kit';
import { TEST_DATABASE_KINDS } from './support/test-databases';
import { DELIVERIES } from './support/settings-api';

const event = (userId: number, title: string) => ({ userId, type: 'RATE_SPIKE', severity: 'WARNING', title, body: 'USD FRR 0.08%' });
const events = (userId: number, count: number) => Array.from({ length: count }, (_, i) => event(userId, `#${i}`));

describe.each(TEST_DATABASE_KINDS)('isolation between endpoints on $name', (kind) => {
  describe('a neighbour whose endpoint hangs', () => {
    let t: TestAppWithKit;
    const COOL_DOWN_MS = 30_000;
    beforeAll(
      async () =>
        (t = await startTestAppWithKit(kind, {
          delivery: {
            concurrency: 4,
            perEndpointConcurrency: 2,
            timeoutMs: 3_000,
            leaseMs: 20_000,
            circuitBreaker: { failuresToOpen: 1, coolDownMs: COOL_DOWN_MS },
          },
        })),
    );
    afterAll(() => t.close());

    const deadRequests = () => t.receiver.requests.filter((request) => request.path === '/dead');
    const log = async (userId: number) =>
      (await t.http().get(DELIVERIES).query({ limit: 100 }).set('Authorization', t.bearer(userId)).expect(200)).body.data as {
        status: string;
        attemptCount: number;
        waitingReason: string | null;
      }[];

    it('holds at most its cap of slots, so another user’s event goes out at once', async () => {
      await t.enableWebhook(1, 'RATE_SPIKE', '/dead');
      await t.enableWebhook(2, 'RATE_SPIKE', '/alive');
      t.receiver.respondWith('hang', { path: '/dead' });

      await t.publish({ events: events(1, 20) }).expect(202);
      await t.publish(event(2, 'kill switch')).expect(202);
      await t.receiver.waitForDelivery({ userId: 2 }); // well before the neighbour's 3 s deadlines end

      expect(deadRequests()).toHaveLength(2);
    });

    it('opens the circuit after its attempts time out: the rest wait in the outbox, not failed, and the log says why', async () => {
      await t.settle();

      expect(deadRequests()).toHaveLength(2);
      const deliveries = await log(1);
      expect(deliveries).toHaveLength(20);
      expect(deliveries.every((delivery) => delivery.status === 'PENDING')).toBe(true);
      const parked = deliveries.filter((delivery) => delivery.attemptCount === 0);
      expect(parked).toHaveLength(18);
      const reopensAt = new Date(t.clock.now() + COOL_DOWN_MS).toISOString();
      for (const delivery of parked)
        expect(delivery.waitingReason).toBe(
          `endpoint unreachable (1 attempt timed out or failed to connect); circuit open, next try at ${reopensAt}`,
        );
      const metrics = await t.app.get(NotificationsMetrics).registry.metrics();
      expect(metrics).toContain('webhook_circuits_open 1');
      expect(metrics).toContain('webhook_circuits_opened_total 1');
      expect(metrics).toContain('webhook_deliveries_parked_total 18');
    });

    it('parks what is published while the circuit is open, without a request', async () => {
      await t.publish(event(1, 'while open')).expect(202);
      await t.settle();
      expect(deadRequests()).toHaveLength(2);
      expect((await log(1)).filter((delivery) => delivery.waitingReason !== null)).toHaveLength(19);
    });

    it('probes once after the cool-down, then delivers every parked event as soon as the endpoint answers', async () => {
      t.receiver.respondWith({ status: 204 }, { path: '/dead' });
      t.advance(COOL_DOWN_MS);
      await t.runScheduler();

      expect(deadRequests()).toHaveLength(2 + 19);
      const deliveries = await log(1);
      expect(deliveries.filter((delivery) => delivery.status === 'DELIVERED')).toHaveLength(19);
      expect(deliveries.every((delivery) => delivery.waitingReason === null)).toBe(true);
      expect(await t.app.get(NotificationsMetrics).registry.metrics()).toContain('webhook_circuits_open 0');

      t.advance(60_000); // the two attempts that timed out are retried on the spec's schedule
      expect(await t.runScheduler()).toBe(2);
      expect((await log(1)).every((delivery) => delivery.status === 'DELIVERED')).toBe(true);
    });
  });

  describe('an open circuit whose cool-down ends', () => {
    let t: TestAppWithKit;
    beforeAll(
      async () =>
        (t = await startTestAppWithKit(kind, {
          delivery: {
            concurrency: 4,
            perEndpointConcurrency: 1,
            timeoutMs: 1_000,
            leaseMs: 20_000,
            circuitBreaker: { failuresToOpen: 1, coolDownMs: 1_000 },
          },
        })),
    );
    afterAll(() => t.close());

    it('probes at once, without waiting for the next scheduler run', async () => {
      await t.enableWebhook(5, 'RATE_SPIKE', '/flaky');
      t.receiver.respondNext(['hang'], { path: '/flaky' });
      await t.publish({ events: events(5, 3) }).expect(202);
      await t.settle(); // the first attempt timed out: the circuit is open, the other two are parked for 1 s

      t.advance(1_000); // the cool-down is over; no runScheduler: the engine wakes by itself
      const arrived = await t.receiver.waitForDelivery({ userId: 5, count: 3, timeoutMs: 10_000 });
      expect(arrived).toHaveLength(3);
    });
  });

  describe('attempts to one busy origin', () => {
    let t: TestAppWithKit;
    beforeAll(
      async () =>
        (t = await startTestAppWithKit(kind, {
          delivery: { concurrency: 24, perEndpointConcurrency: 1, timeoutMs: 2_500, leaseMs: 20_000 },
        })),
    );
    afterAll(() => t.close());

    it('each get the whole deadline for the receiver: none times out waiting for a pooled connection', async () => {
      const users = Array.from({ length: 24 }, (_, i) => 100 + i);
      for (const userId of users) await t.enableWebhook(userId, 'RATE_SPIKE', `/slow/${userId}`);
      t.receiver.respondWith({ status: 204, delayMs: 1_500 }); // 16 pooled connections per origin would make 8 of them wait 1.5 s

      await t.publish({ events: users.map((userId) => event(userId, 'slow')) }).expect(202);
      await t.receiver.waitForDelivery({ count: 24, timeoutMs: 10_000 });
      await t.settle();

      const outcomes = await t.dataSource.query('SELECT outcome FROM webhook_delivery_attempts');
      expect(outcomes.map((row: { outcome: string }) => row.outcome)).toEqual(Array(24).fill('success'));
    });
  });

  describe('a claim', () => {
    let t: TestAppWithKit;
    beforeAll(async () => (t = await startTestAppWithKit(kind)));
    afterAll(() => t.close());

    it('takes at most a fair share of one user’s backlog, leaves out saturated users, and says when nothing is left', async () => {
      const outbox = t.app.get(DeliveryOutboxRepository);
      const engine = t.app.get(OutboxEngine);
      const due = (userId: number, count: number) =>
        Array.from({ length: count }, () => ({ id: randomUUID(), userId, type: 'RATE_SPIKE' as EventType, body: '{}' }));
      await outbox.enqueue([...due(1, 30), ...due(2, 2), ...due(3, 1)], () => 'due', engine.lease());

      const first = await outbox.claimDue(10, engine.lease(), { perUser: 4, heldByUser: new Map([[1, 1]]) });
      const users = first.claims.map((claim) => claim.userId).sort();
      expect(users).toEqual([1, 1, 1, 2, 2, 3]); // user 1 held 1 already: 3 more fit its 4
      expect(first.exhausted).toBe(false); // user 1's other 27 are still due

      const second = await outbox.claimDue(10, engine.lease(), { perUser: 4, heldByUser: new Map([[1, 4]]) });
      expect(second).toEqual({ claims: [], exhausted: true, excluded: [1] });

      const third = await outbox.claimDue(100, engine.lease(), { perUser: 100, heldByUser: new Map() });
      expect(third.claims).toHaveLength(27);
      expect(third.exhausted).toBe(true);
    });

    it('goes on claiming within one scheduler run until a user’s backlog beyond their share is attempted', async () => {
      const userId = 4;
      await t.enableWebhook(userId, 'RATE_SPIKE', '/backlog');
      const outbox = t.app.get(DeliveryOutboxRepository);
      const engine = t.app.get(OutboxEngine);
      const backlog = Array.from({ length: 50 }, () => ({ id: randomUUID(), userId, type: 'RATE_SPIKE' as EventType, body: '{}' }));
      await outbox.enqueue(backlog, () => 'due', engine.lease());

      expect(await t.runScheduler()).toBe(50); // 16 per user per claim: the claims after the first come as attempts end
      expect(t.receiver.requests.filter((request) => request.path === '/backlog')).toHaveLength(50);
    });
  });
});
