import { randomUUID } from 'node:crypto';
import { TestClock } from '@funding/notification-webhooks/testing';
import type { EventType } from '../../src/notifications/catalog/event-catalog';
import { DeliveryEvents } from '../../src/notifications/delivery/events/delivery-events.service';
import { DELIVERY_SETTINGS, type DeliverySettings } from '../../src/notifications/delivery/delivery-settings';
import { AfterCommit } from '../../src/notifications/delivery/engine/after-commit.subscriber';
import { DeliveryOutboxRepository } from '../../src/notifications/delivery/engine/delivery-outbox.repository';
import { OutboxEngine } from '../../src/notifications/delivery/engine/outbox-engine.service';
import { WebhookSender } from '../../src/notifications/delivery/http/webhook-sender';
import { PreferencesService } from '../../src/notifications/preferences/preferences.service';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { soleOwnership } from '../support/sole-ownership';

describeEachDatabase('leases between instances whose clocks differ, on $name', (kind) => {
  const t = appWithKitPerSuite(kind, {
    delivery: { concurrency: 2, perEndpointConcurrency: 1, timeoutMs: 1_000, leaseMs: 20_000, circuitBreaker: { failuresToOpen: 0 } },
  });

  /** A second instance on the same database, its clock 2 s ahead of the first's. */
  const instanceAhead = (clock: TestClock) =>
    new OutboxEngine(
      t.app.get(DeliveryOutboxRepository),
      t.app.get(PreferencesService),
      t.app.get(WebhookSender),
      clock,
      t.app.get(DeliveryEvents),
      t.app.get<DeliverySettings>(DELIVERY_SETTINGS),
      t.app.get(AfterCommit),
      soleOwnership(clock, t.app.get<DeliverySettings>(DELIVERY_SETTINGS)),
    );

  it('an attempt starts only if it and its record fit in the lease with the tolerated skew, so the instance ahead never sends it again', async () => {
    const ahead = new TestClock(t.clock.now() + 2_000);
    const second = instanceAhead(ahead);
    const first = t.app.get(OutboxEngine);
    await t.enableWebhook(1, 'RATE_SPIKE', '/slow');
    t.receiver.respondWith({ status: 204, delayMs: 600 }, { path: '/slow' });
    t.receiver.respondNext(['hang'], { path: '/slow' });
    const outbox = t.app.get(DeliveryOutboxRepository);
    const due = Array.from({ length: 2 }, () => ({ id: randomUUID(), userId: 1, type: 'RATE_SPIKE' as EventType, body: '{}' }));
    await outbox.enqueue(due, () => 'due', first.lease());

    const draining = first.drain(); // both leased until +20 s; the second waits behind the hanging first
    await t.receiver.waitForDelivery({ path: '/slow' });
    t.advance(16_000); // the first instance's clock: the second starts (if at all) 4 s before its lease ends
    ahead.advance(16_000);
    await draining;
    await vi.waitFor(
      async () => {
        const [row] = await t.dataSource.query('SELECT locked_by FROM webhook_deliveries WHERE event_id = ?', [due[1].id]);
        expect(t.receiver.requests.length === 2 || row.locked_by === null).toBe(true);
      },
      { timeout: 5_000, interval: 20 },
    );

    t.advance(2_500); // the first instance still counts on its lease (+18.5 s of 20 s) while its attempt is recorded ...
    ahead.advance(2_500); // ... while the clock of the instance ahead says the lease ended 0.5 s ago
    await second.drain();
    await Promise.all([first.idle(), second.idle()]);
    t.advance(30_000); // every lease long over: whatever neither instance sent yet is claimed and sent now
    ahead.advance(30_000);
    await first.drain();
    await second.drain();
    await Promise.all([first.idle(), second.idle()]);

    // Sent, and once: never by both instances, never left behind.
    const sent = t.receiver.requests.filter((request) => request.eventId === due[1].id);
    expect(sent).toHaveLength(1);
    const [{ attempts }] = await t.dataSource.query('SELECT attempt_count AS attempts FROM webhook_deliveries WHERE event_id = ?', [
      due[1].id,
    ]);
    expect(Number(attempts)).toBe(sent.length); // whatever was sent was recorded
  });
});
