import { randomUUID } from 'node:crypto';
import { EventType } from '../../src/notifications/catalog/event-catalog';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import { DeliveryStatus, WebhookDelivery } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { WebhookEvent } from '../../src/notifications/delivery/entities/webhook-event.entity';
import { RetentionService } from '../../src/notifications/retention/retention.service';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { DELIVERIES } from '../support/settings-api';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const { DELIVERED, FAILED, PENDING } = DeliveryStatus;

// At most one delivery of an event is PENDING at any time (one retry cycle), whatever starts it: redeliver, recover,
// twice in a row or at once. And an event that was ever delivered is never recovered.
describeEachDatabase('one retry cycle per event on $name', (kind) => {
  const t = appWithKitPerSuite(kind);
  let user = 0;
  let userId: number;

  beforeEach(async () => {
    userId = ++user;
    t.receiver.clear();
    t.receiver.respondWith({ status: 500 });
    t.advance(MINUTE); // a fresh rate-limit window
    await t.enableWebhook(userId, EventType.RATE_SPIKE, `/u${userId}`);
  });

  /** One event with one delivery in `status`, last updated `ageMs` ago. */
  const seed = async (status: DeliveryStatus, ageMs: number, eventId = randomUUID()) => {
    const at = t.clock.now() - ageMs;
    if (!(await t.dataSource.getRepository(WebhookEvent).findOneBy({ id: eventId })))
      await t.dataSource.getRepository(WebhookEvent).insert({ id: eventId, userId, type: EventType.RATE_SPIKE, body: '{}', createdAt: at });
    const inserted = await t.dataSource.getRepository(WebhookDelivery).insert({
      eventId,
      userId,
      partition: partitionOf(userId),
      type: EventType.RATE_SPIKE,
      status,
      attemptCount: 6,
      nextAttemptAt: null,
      createdAt: at,
      updatedAt: at,
    });
    return { eventId, deliveryId: Number(inserted.identifiers[0].id) };
  };
  const redeliver = (id: number) =>
    t.http().post(`${DELIVERIES}/${id}/redeliver`).set('Authorization', t.bearer(userId)).set('Content-Type', 'application/json');
  const recover = (since: number) =>
    t
      .http()
      .post(`${DELIVERIES}/recover`)
      .set('Authorization', t.bearer(userId))
      .send({ since: new Date(since).toISOString() });
  /** This case's requests: a retry an earlier case left comes due as the clock moves on, and goes to that case's user. */
  const requestsOfUser = () => t.receiver.requests.filter((request) => request.path === `/u${userId}`);
  const pendingOf = (eventId: string) => t.dataSource.getRepository(WebhookDelivery).findBy({ eventId, status: PENDING });

  it('answers 409 to a second redeliver of a FAILED delivery while the first cycle runs, naming that delivery', async () => {
    const { eventId, deliveryId } = await seed(FAILED, MINUTE);
    const first = await redeliver(deliveryId).expect(202);
    await t.settle();

    const second = await redeliver(deliveryId).expect(409);
    expect(second.body.message).toBe(
      `Event ${eventId} is being delivered already: delivery ${first.body.id} is PENDING (its retry cycle is running); redeliver once it is DELIVERED, FAILED or CANCELLED`,
    );
    expect((await pendingOf(eventId)).map((d) => d.id)).toEqual([first.body.id]);
    expect(requestsOfUser()).toHaveLength(1);
  });

  it('starts one cycle when the same FAILED delivery is redelivered twice at once (a double click)', async () => {
    const { eventId, deliveryId } = await seed(FAILED, MINUTE);
    const answers = await Promise.all([redeliver(deliveryId), redeliver(deliveryId)]);
    await t.settle();

    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 409]);
    expect(await pendingOf(eventId)).toHaveLength(1);
    expect(requestsOfUser()).toHaveLength(1);
  });

  it('recovers nothing of an event that is being redelivered, and redelivers nothing being recovered', async () => {
    const recovering = await seed(FAILED, MINUTE);
    const redelivering = await seed(FAILED, MINUTE);
    await redeliver(redelivering.deliveryId).expect(202);

    expect((await recover(t.clock.now() - DAY).expect(202)).body).toEqual({ queued: 1, more: false });
    await redeliver(recovering.deliveryId).expect(409);
    expect(await pendingOf(recovering.eventId)).toHaveLength(1);
    expect(await pendingOf(redelivering.eventId)).toHaveLength(1);
  });

  it('never recovers an event that was delivered, once retention has purged its DELIVERED delivery', async () => {
    const { eventId } = await seed(FAILED, 40 * DAY);
    await seed(DELIVERED, 35 * DAY, eventId); // a redelivery that succeeded, older than the 30 days DELIVERED rows are kept

    await t.app.get(RetentionService).purge();
    expect(await t.dataSource.getRepository(WebhookDelivery).findBy({ eventId })).toMatchObject([{ status: FAILED }]);

    expect((await recover(t.clock.now() - 50 * DAY).expect(202)).body).toEqual({ queued: 0, more: false });
    expect(await pendingOf(eventId)).toHaveLength(0);
  });
});
