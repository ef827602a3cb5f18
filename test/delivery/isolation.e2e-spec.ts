import { randomUUID } from 'node:crypto';
import { filter, firstValueFrom } from 'rxjs';
import type { EventType } from '../../src/notifications/catalog/event-catalog';
import { DeliveryOutboxRepository } from '../../src/notifications/delivery/engine/delivery-outbox.repository';
import { OutboxEngine } from '../../src/notifications/delivery/engine/outbox-engine.service';
import { DeliveryEvents } from '../../src/notifications/delivery/events/delivery-events.service';
import { NotificationsMetrics } from '../../src/notifications/metrics/notifications-metrics.service';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import type { TestAppWithKit } from '../support/test-app-with-kit';
import { DELIVERIES } from '../support/settings-api';

const event = (userId: number, title: string) => ({ userId, type: 'RATE_SPIKE', severity: 'WARNING', title, body: 'USD FRR 0.08%' });
const events = (userId: number, count: number) => Array.from({ length: count }, (_, i) => event(userId, `#${i}`));

describeEachDatabase('isolation between endpoints on $name', (kind) => {
  describe('a neighbour whose endpoint hangs', () => {
    const COOL_DOWN_MS = 30_000;
    const t = appWithKitPerSuite(kind, {
      delivery: {
        concurrency: 4,
        perEndpointConcurrency: 2,
        timeoutMs: 3_000,
        leaseMs: 20_000,
        circuitBreaker: { failuresToOpen: 1, coolDownMs: COOL_DOWN_MS },
      },
    });

    const deadRequests = () => t.receiver.requests.filter((request) => request.path === '/dead');
    const log = async (userId: number) =>
      (await t.http().get(DELIVERIES).query({ limit: 100 }).set('Authorization', t.bearer(userId)).expect(200)).body.data as {
        status: string;
        attemptCount: number;
        lastError: string | null;
        nextAttemptAt: string;
      }[];

    it('holds at most its cap of slots, so another user’s event goes out at once', async () => {
      await t.enableWebhook(1, 'RATE_SPIKE', '/dead');
      await t.enableWebhook(2, 'RATE_SPIKE', '/alive');
      t.receiver.respondWith('hang', { path: '/dead' });

      const neighbourRecorded = firstValueFrom(t.app.get(DeliveryEvents).attemptRecorded.pipe(filter((a) => a.userId === 2)));
      await t.publish({ events: events(1, 20) }).expect(202);
      await t.publish(event(2, 'kill switch')).expect(202);
      await t.receiver.waitForDelivery({ userId: 2 }); // well before the neighbour's 3 s deadlines end
      await neighbourRecorded;

      expect(deadRequests()).toHaveLength(2);
      // Its 2 requests in flight, 6 more queued behind them (its share held in memory: 2 slots × 4); the rest wait in the outbox.
      const metrics = await t.app.get(NotificationsMetrics).registry.metrics();
      expect(metrics).toContain('webhook_leases_held{step="send"} 2');
      expect(metrics).toContain('webhook_leases_held{step="acquire"} 6');
    });

    it('opens the circuit after its attempts time out: the rest are skipped without a request, each using one attempt, and the log says why', async () => {
      await t.settle();

      expect(deadRequests()).toHaveLength(2);
      const deliveries = await log(1);
      expect(deliveries).toHaveLength(20);
      expect(deliveries.every((delivery) => delivery.status === 'PENDING' && delivery.attemptCount === 1)).toBe(true);
      const skipped = deliveries.filter((delivery) => delivery.lastError?.startsWith('circuit open'));
      expect(skipped).toHaveLength(18);
      const reopensAt = new Date(t.clock.now() + COOL_DOWN_MS).toISOString();
      for (const delivery of skipped) {
        expect(delivery.lastError).toBe(
          `circuit open for ${new URL(t.receiver.url('/dead')).host} until ${reopensAt}; no request made (endpoint unreachable (1 attempt timed out or failed to connect); circuit open, next try at ${reopensAt})`,
        );
        expect(delivery.nextAttemptAt).toBe(new Date(t.clock.now() + 60_000).toISOString()); // on the spec's schedule
      }
      const metrics = await t.app.get(NotificationsMetrics).registry.metrics();
      expect(metrics).toContain('webhook_circuits_open 1');
      expect(metrics).toContain('webhook_circuits_opened_total 1');
      expect(metrics).toContain('webhook_deliveries_parked_total 18');
      expect(metrics).toContain('webhook_attempts_total{outcome="circuit_open"} 18');
      for (const step of ['claim', 'admit', 'acquire', 'send', 'settle', 'release', 'cancel'])
        expect(metrics).toContain(`webhook_leases_held{step="${step}"} 0`);
    });

    it('skips what is published while the circuit is open, without a request', async () => {
      await t.publish(event(1, 'while open')).expect(202);
      await t.settle();
      expect(deadRequests()).toHaveLength(2);
      expect((await log(1)).filter((delivery) => delivery.lastError?.startsWith('circuit open'))).toHaveLength(19);
    });

    it('probes once when the next attempts come due after the cool-down, then delivers every event as soon as the endpoint answers', async () => {
      t.receiver.respondWith({ status: 204 }, { path: '/dead' });
      t.advance(60_000);
      expect(await t.runScheduler()).toBe(21);

      expect(deadRequests()).toHaveLength(2 + 21);
      const deliveries = await log(1);
      expect(deliveries.every((delivery) => delivery.status === 'DELIVERED' && delivery.attemptCount === 2)).toBe(true);
      expect(await t.app.get(NotificationsMetrics).registry.metrics()).toContain('webhook_circuits_open 0');
    });
  });

  /** Deliveries due at `dueAt` (as a retry would be), stored without an attempt. */
  const dueLater = async (t: TestAppWithKit, userId: number, count: number, dueAt: number) => {
    const engine = t.app.get(OutboxEngine);
    const stored = Array.from({ length: count }, () => ({ id: randomUUID(), userId, type: 'RATE_SPIKE' as EventType, body: '{}' }));
    await t.app.get(DeliveryOutboxRepository).enqueue(stored, () => ({ parkUntil: dueAt, reason: 'retry' }), engine.lease());
  };

  describe('an open circuit whose cool-down ends', () => {
    const t = appWithKitPerSuite(kind, {
      delivery: {
        concurrency: 4,
        perEndpointConcurrency: 1,
        timeoutMs: 1_000,
        leaseMs: 20_000,
        circuitBreaker: { failuresToOpen: 1, coolDownMs: 1_000 },
      },
    });

    it('probes what came due meanwhile at once, without waiting for the next scheduler run', async () => {
      await t.enableWebhook(5, 'RATE_SPIKE', '/flaky');
      t.receiver.respondNext(['hang'], { path: '/flaky' });
      await t.publish(event(5, 'first')).expect(202);
      await t.settle(); // the attempt timed out: the circuit is open for 1 s
      await dueLater(t, 5, 2, t.clock.now() + 500); // two retries come due while it is open

      t.advance(1_000); // the cool-down is over; no runScheduler: the engine wakes by itself
      const arrived = await t.receiver.waitForDelivery({ path: '/flaky', count: 3, timeoutMs: 10_000 });
      expect(arrived).toHaveLength(3);
    });
  });

  describe('two circuits opened one after the other', () => {
    const t = appWithKitPerSuite(kind, {
      delivery: {
        concurrency: 4,
        perEndpointConcurrency: 1,
        timeoutMs: 200,
        leaseMs: 20_000,
        circuitBreaker: { failuresToOpen: 1, coolDownMs: 2_000 },
      },
    });

    it('each probe when its own cool-down ends, the later one without waiting for the next scheduler run', async () => {
      await t.enableWebhook(7, 'RATE_SPIKE', '/first');
      await t.enableWebhook(8, 'RATE_SPIKE', '/second');
      t.receiver.respondNext(['hang'], { path: '/first' });
      t.receiver.respondNext(['hang'], { path: '/second' });
      await t.publish(event(7, 'first')).expect(202);
      await t.settle(); // the first circuit is open until +2 s
      await dueLater(t, 7, 1, t.clock.now() + 1_500);
      t.advance(1_000);
      await t.publish(event(8, 'second')).expect(202);
      await t.settle(); // the second until +3 s
      await dueLater(t, 8, 1, t.clock.now() + 1_500);

      t.advance(1_000); // only the first cool-down is over; no runScheduler: the engine wakes by itself
      await t.receiver.waitForDelivery({ path: '/first', count: 2, timeoutMs: 10_000 }); // the timed-out one, then the probe
      t.advance(1_000);
      const second = await t.receiver.waitForDelivery({ path: '/second', count: 2, timeoutMs: 10_000 });
      expect(second).toHaveLength(2);
    });
  });

  describe('attempts to one busy origin', () => {
    const t = appWithKitPerSuite(kind, {
      delivery: { concurrency: 24, perEndpointConcurrency: 1, timeoutMs: 2_500, leaseMs: 20_000 },
    });

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
    const t = appWithKitPerSuite(kind);
    beforeAll(async () => {
      await t.settle(); // its start-up look for due work is over: it would otherwise claim what these tests store
    });

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
