import { DeliveryLogRepository } from '../../src/notifications/delivery/delivery-log/delivery-log.repository';
import { DeliveryOutboxRepository } from '../../src/notifications/delivery/engine/delivery-outbox.repository';
import { OutboxEngine } from '../../src/notifications/delivery/engine/outbox-engine.service';
import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { DELIVERIES } from '../support/settings-api';

const event = (userId: number, title = 'Rate spike') => ({ userId, type: 'RATE_SPIKE', severity: 'WARNING', title, body: 'USD FRR 0.08%' });

describeEachDatabase('delivery safety on $name', (kind) => {
  describe('a signing secret that cannot be decrypted', () => {
    const t = appWithKitPerSuite(kind);

    it('fails only that webhook’s attempts, without a request, and delivers everyone else’s', async () => {
      await t.enableWebhook(1, 'RATE_SPIKE', '/one');
      await t.enableWebhook(2, 'RATE_SPIKE', '/two');
      const [{ id }] = await t.dataSource.query(`SELECT id FROM notification_preferences WHERE user_id = 1 AND channel = 'WEBHOOK'`);
      await t.dataSource.query(`UPDATE webhook_signing_secrets SET key_id = 'retired' WHERE preference_id = ?`, [id]);

      const published = await t.publish({ events: [event(1), event(2)] }).expect(202);
      expect(published.body.queuedDeliveries).toBe(2);
      await t.waitForDelivery({ userId: 2 });

      expect(t.receiver.requests.map((request) => request.path)).toEqual(['/two']);
      const [delivery] = (await t.http().get(`${DELIVERIES}`).set('Authorization', t.bearer(1)).expect(200)).body.data;
      expect(delivery).toMatchObject({ status: 'PENDING', attemptCount: 1 });
      const detail = await t.http().get(`${DELIVERIES}/${delivery.id}`).set('Authorization', t.bearer(1)).expect(200);
      expect(detail.body.attempts[0]).toMatchObject({
        outcome: 'blocked',
        error: 'blocked: signing secret cannot be decrypted: No encryption key with id "retired" is configured',
      });
    });
  });

  describe('a lease that would end before the attempt could finish', () => {
    const t = appWithKitPerSuite(kind, { delivery: { concurrency: 1, timeoutMs: 1_000, leaseMs: 10_000 } });

    it('does not send that attempt but hands its lease back at once, so it is sent once, by whoever claims it next', async () => {
      await t.enableWebhook(3, 'RATE_SPIKE');
      t.receiver.respondNext(['hang']);
      await t.publish({ events: [event(3, 'first'), event(3, 'second')] }).expect(202);
      await t.receiver.waitForDelivery({ userId: 3 });

      t.advance(8_000); // the second waits behind the hanging first one while its lease runs out
      await t.settle(); // handed back when its turn came, then claimed again with a fresh lease and sent

      const sent = t.receiver.requests.map((request) => `${request.eventId}#${request.attempt}`);
      expect(sent).toHaveLength(2);
      expect(new Set(sent).size).toBe(2);
      t.advance(3_000); // the first lease would have ended: nothing is left for another instance to send again
      expect(await t.runScheduler()).toBe(0);
      expect(t.receiver.requests).toHaveLength(2);
      expect(JSON.parse(t.receiver.requests[1].rawBody.toString()).title).toBe('second');
    });
  });

  describe('an instance whose lease was taken over', () => {
    const t = appWithKitPerSuite(kind);

    it('cannot record its attempt over the new holder’s, while the new holder records its own', async () => {
      await t.enableWebhook(4, 'RATE_SPIKE');
      t.receiver.respondWith({ status: 503 });
      await t.publish(event(4)).expect(202);
      await t.waitForDelivery({ userId: 4 });
      const outbox = t.app.get(DeliveryOutboxRepository);
      const worker = t.app.get(OutboxEngine);

      t.advance(60_000);
      const {
        claims: [stale],
      } = await outbox.claimDue(10, worker.lease());
      t.advance(61_000); // the first claim's lease ran out: another instance takes the delivery over
      const {
        claims: [current],
      } = await outbox.claimDue(10, worker.lease());
      expect(current.id).toBe(stale.id);

      const result = { outcome: 'success' as const, statusCode: 200, durationMs: 5, error: null, responseExcerpt: null };
      // Each attempt started under its own lease: the stale one 61 s before the current one.
      const record = (startedAt: number) => ({ startedAt, result, status: DeliveryStatus.DELIVERED, nextAttemptAt: null });
      expect(
        await outbox.recordAttempts([
          { claim: stale, record: record(t.clock.now() - 61_000) },
          { claim: current, record: record(t.clock.now()) },
        ]),
      ).toEqual([false, true]);
      const attempts = await t.app.get(DeliveryLogRepository).attemptsOf(current.id);
      expect(attempts.map((attempt) => [attempt.attemptNumber, attempt.outcome])).toEqual([
        [1, 'http_error'],
        [2, 'success'],
      ]);
    });
  });
});
