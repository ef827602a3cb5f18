import { randomUUID } from 'node:crypto';
import { SchedulerRegistry } from '@nestjs/schedule';
import { EventType } from '../../src/notifications/catalog/event-catalog';
import { DeliveryLogRepository } from '../../src/notifications/delivery/delivery-log/delivery-log.repository';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import { DeliveryStatus, WebhookDelivery } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { WebhookDeliveryAttempt } from '../../src/notifications/delivery/entities/webhook-delivery-attempt.entity';
import { WebhookEvent } from '../../src/notifications/delivery/entities/webhook-event.entity';
import { RetentionService } from '../../src/notifications/retention/retention.service';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { DELIVERIES } from '../support/settings-api';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const { DELIVERED, CANCELLED, FAILED, PENDING } = DeliveryStatus;

describeEachDatabase('delivery retention on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { retention: { batchSize: 2 } });

  beforeEach(async () => {
    for (const table of ['webhook_delivery_attempts', 'webhook_deliveries', 'webhook_events'])
      await t.dataSource.query(`DELETE FROM ${table}`);
  });

  const purge = () => t.app.get(RetentionService).purge();
  const count = async (table: string) => Number((await t.dataSource.query(`SELECT COUNT(*) AS n FROM ${table}`))[0].n);

  /** One event with one delivery last updated `ageMs` ago, and `attempts` attempts. */
  const seed = async (status: DeliveryStatus, ageMs: number, { eventId = randomUUID(), attempts = 2 } = {}) => {
    const updatedAt = t.clock.now() - ageMs;
    if (!(await t.dataSource.getRepository(WebhookEvent).findOneBy({ id: eventId }))) {
      await t.dataSource
        .getRepository(WebhookEvent)
        .insert({ id: eventId, userId: 7, type: EventType.RATE_SPIKE, body: '{}', createdAt: updatedAt - DAY });
    }
    const inserted = await t.dataSource.getRepository(WebhookDelivery).insert({
      eventId,
      userId: 7,
      partition: partitionOf(7),
      type: EventType.RATE_SPIKE,
      status,
      attemptCount: attempts,
      nextAttemptAt: status === PENDING ? t.clock.now() + MINUTE : null,
      createdAt: updatedAt - DAY,
      updatedAt,
    });
    const deliveryId = Number(inserted.identifiers[0].id);
    for (let attemptNumber = 1; attemptNumber <= attempts; attemptNumber++) {
      await t.dataSource.getRepository(WebhookDeliveryAttempt).insert({
        deliveryId,
        attemptNumber,
        startedAt: updatedAt,
        durationMs: 5,
        outcome: 'http_error',
        statusCode: 500,
        error: null,
        responseExcerpt: null,
      });
    }
    return { eventId, deliveryId };
  };
  const exists = async (deliveryId: number) => (await t.dataSource.getRepository(WebhookDelivery).countBy({ id: deliveryId })) === 1;

  it('deletes delivered and cancelled deliveries after 30 days and failed ones after 90, with their attempts and events', async () => {
    const deleted = [
      await seed(DELIVERED, 30 * DAY + MINUTE),
      await seed(DELIVERED, 400 * DAY),
      await seed(DELIVERED, 31 * DAY),
      await seed(CANCELLED, 30 * DAY + MINUTE, { attempts: 1 }),
      await seed(FAILED, 90 * DAY + MINUTE, { attempts: 6 }),
    ];
    const kept = [
      await seed(DELIVERED, 30 * DAY - MINUTE),
      await seed(CANCELLED, 30 * DAY - MINUTE),
      await seed(FAILED, 90 * DAY - MINUTE, { attempts: 6 }),
      await seed(FAILED, 31 * DAY, { attempts: 6 }),
      await seed(PENDING, 400 * DAY, { attempts: 3 }),
    ];

    expect(await purge()).toEqual({
      delivered: 3,
      cancelled: 1,
      failed: 1,
      attempts: 2 + 2 + 2 + 1 + 6,
      events: 5,
      idempotencyKeys: 0,
    });

    for (const { deliveryId } of deleted) expect(await exists(deliveryId)).toBe(false);
    for (const { deliveryId } of kept) expect(await exists(deliveryId)).toBe(true);
    expect(await count('webhook_delivery_attempts')).toBe(2 + 2 + 6 + 6 + 3);
    expect(await count('webhook_events')).toBe(kept.length);
    expect(await purge()).toEqual({ delivered: 0, cancelled: 0, failed: 0, attempts: 0, events: 0, idempotencyKeys: 0 });
  });

  it('keeps an event while a newer delivery of it (a redelivery) remains', async () => {
    const old = await seed(DELIVERED, 45 * DAY);
    const redelivery = await seed(DELIVERED, DAY, { eventId: old.eventId });

    expect(await purge()).toMatchObject({ delivered: 1, events: 0 });
    expect(await exists(old.deliveryId)).toBe(false);
    expect(await exists(redelivery.deliveryId)).toBe(true);
    expect(await count('webhook_events')).toBe(1);

    t.advance(30 * DAY);
    expect(await purge()).toMatchObject({ delivered: 1, events: 1 });
    expect(await count('webhook_events')).toBe(0);
  });

  it('answers 404 and queues nothing when retention removes a delivery while it is being redelivered', async () => {
    const old = await seed(DELIVERED, 45 * DAY);
    const log = t.app.get(DeliveryLogRepository);
    const findForUser = log.findForUser.bind(log);
    // The race, made deterministic: the purge runs between the redeliver's read of the delivery and its insert.
    vi.spyOn(log, 'findForUser').mockImplementationOnce(async (userId, id) => {
      const delivery = await findForUser(userId, id);
      expect(await purge()).toMatchObject({ delivered: 1, events: 1 });
      return delivery;
    });

    const answer = await t
      .http()
      .post(`${DELIVERIES}/${old.deliveryId}/redeliver`)
      .set('Authorization', t.bearer(7))
      .set('Content-Type', 'application/json')
      .expect(404);
    vi.restoreAllMocks();
    expect(answer.body.message).toBe(`Delivery ${old.deliveryId} not found`);
    expect(await count('webhook_deliveries')).toBe(0);
    expect(await count('webhook_events')).toBe(0);
  });

  it("removes a real delivery from the user's log once it is past retention, on a named daily job", async () => {
    expect(t.app.get(SchedulerRegistry).getCronJob('webhook-delivery-retention')).toBeDefined();
    const userId = 42;
    await t.enableWebhook(userId, 'RATE_SPIKE');
    await t.publish({ userId, type: 'RATE_SPIKE', severity: 'INFO', title: 'Rate spike', body: 'USD FRR up', payload: {} }).expect(202);
    await t.waitForDelivery({ userId });
    const log = () => t.http().get(DELIVERIES).set('Authorization', t.bearer(userId)).expect(200);
    const [delivery] = (await log()).body.data;
    expect(delivery.status).toBe('DELIVERED');

    t.advance(29 * DAY);
    expect(await purge()).toMatchObject({ delivered: 0 });
    t.advance(DAY + MINUTE);
    expect(await purge()).toEqual({ delivered: 1, cancelled: 0, failed: 0, attempts: 1, events: 1, idempotencyKeys: 0 });
    expect((await log()).body.data).toEqual([]);
    await t.http().get(`${DELIVERIES}/${delivery.id}`).set('Authorization', t.bearer(userId)).expect(404);
  });
});
