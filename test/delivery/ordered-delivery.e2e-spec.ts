import type { EventType } from '../../src/notifications/catalog/event-catalog';
import { RETRY_DELAYS_MS } from '../../src/notifications/delivery/retry-policy';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { DELIVERIES, SETTINGS } from '../support/settings-api';

const HEALTH = `${SETTINGS}/webhook-health`;

describeEachDatabase('ordered delivery per user and webhook URL on $name', (kind) => {
  const t = appWithKitPerSuite(kind);
  let user = 0;
  let userId: number;

  beforeEach(() => {
    userId = ++user;
    t.receiver.clear();
    t.receiver.respondWith({ status: 204 });
  });

  const event = (type: `${EventType}` = 'RATE_SPIKE') => ({ userId, type, severity: 'INFO', title: type, body: type, payload: {} });
  const put = (body: object) =>
    t.http().put(SETTINGS).set('Authorization', t.bearer(userId)).set('Content-Type', 'application/json').send(body);
  const ordered = async (types: `${EventType}`[], path = `/u${userId}`) => {
    for (const type of types) await t.enableWebhook(userId, type, path);
    await put({ type: types[0], channel: 'WEBHOOK', enabled: true, webhookUrl: t.receiver.url(path), orderedDelivery: true }).expect(200);
  };
  const sequences = () => t.receiver.requests.map((request) => Number(request.headers['x-service-sequence']));
  const health = async () => (await t.http().get(HEALTH).set('Authorization', t.bearer(userId)).expect(200)).body;
  /** Runs the scheduler at each retry time of the spec's schedule, from now. */
  const throughRetries = async (delays: readonly number[] = RETRY_DELAYS_MS) => {
    for (const delay of delays) {
      t.advance(delay);
      await t.runScheduler();
    }
  };

  it('is a setting of the URL on the settings API: shared by the types posting there, refused where it means nothing', async () => {
    await ordered(['RATE_SPIKE', 'RATE_DROP']);
    await t.enableWebhook(userId, 'LOAN_EXECUTED', `/u${userId}/other`);
    const list = (await t.http().get(SETTINGS).set('Authorization', t.bearer(userId)).expect(200)).body;
    const byType = Object.fromEntries(list.map((row: { type: string; orderedDelivery: boolean }) => [row.type, row.orderedDelivery]));
    expect(byType).toEqual({ LOAN_EXECUTED: false, RATE_DROP: true, RATE_SPIKE: true });
    const effective = (await t.http().get(`${SETTINGS}/effective`).set('Authorization', t.bearer(userId)).expect(200)).body;
    expect(effective.find((row: { type: string; channel: string }) => row.type === 'RATE_DROP' && row.channel === 'WEBHOOK')).toMatchObject(
      {
        orderedDelivery: true,
      },
    );
    expect((await health()).map((row: { orderedDelivery: boolean }) => row.orderedDelivery).sort()).toEqual([false, true, true]);

    const refused = await put({ type: 'RATE_SPIKE', channel: 'IN_APP', enabled: true, orderedDelivery: true }).expect(400);
    expect(refused.body.errors).toEqual([{ field: 'orderedDelivery', message: 'is only accepted with channel WEBHOOK' }]);
    const noUrl = await put({ type: 'FEE_TIER_CHANGED', channel: 'WEBHOOK', enabled: false, orderedDelivery: true }).expect(400);
    expect(noUrl.body.errors).toEqual([{ field: 'orderedDelivery', message: 'needs a webhookUrl: send one, or save one first' }]);
    // Off again, for the URL: both types follow.
    await put({ type: 'RATE_DROP', channel: 'WEBHOOK', enabled: true, webhookUrl: t.receiver.url(`/u${userId}`), orderedDelivery: false });
    const after = (await t.http().get(SETTINGS).set('Authorization', t.bearer(userId)).expect(200)).body;
    expect(after.map((row: { orderedDelivery: boolean }) => row.orderedDelivery)).toEqual([false, false, false]);
  });

  it('starts a delivery only once the one before it is final; a FAILED one lets the next go; the health view shows the wait', async () => {
    await ordered(['RATE_SPIKE', 'RATE_DROP']);
    t.receiver.respondWith({ status: 500 });
    await t.publish({ events: [event('RATE_SPIKE'), event('RATE_DROP'), event('RATE_SPIKE')] }).expect(202);
    await t.waitForDelivery({ userId });
    await t.runScheduler();
    expect(sequences()).toEqual([1]);

    await throughRetries(RETRY_DELAYS_MS.slice(0, 2));
    expect(sequences()).toEqual([1, 1, 1]);
    const [spike] = await health();
    expect(spike).toMatchObject({
      orderedDelivery: true,
      orderedHead: { type: 'RATE_SPIKE', sequence: 1, attemptCount: 3, lastError: expect.stringContaining('500') },
      waitingBehind: 2,
    });
    expect(Date.parse(spike.orderedHead.nextAttemptAt)).toBe(t.clock.now() + RETRY_DELAYS_MS[2]);

    await throughRetries(RETRY_DELAYS_MS.slice(2));
    // The 6th attempt ended FAILED: the second one went at once, and holds the third while it retries.
    expect(sequences()).toEqual([1, 1, 1, 1, 1, 1, 2]);
    t.receiver.respondWith({ status: 204 });
    await throughRetries(RETRY_DELAYS_MS.slice(0, 1));
    expect(sequences()).toEqual([1, 1, 1, 1, 1, 1, 2, 2, 3]);
    const log = (await t.http().get(DELIVERIES).set('Authorization', t.bearer(userId)).expect(200)).body.data;
    expect(log.map((delivery: { sequence: number; status: string }) => [delivery.sequence, delivery.status])).toEqual([
      [3, 'DELIVERED'],
      [2, 'DELIVERED'],
      [1, 'FAILED'],
    ]);
    const [after] = await health();
    expect(after).toMatchObject({ orderedDelivery: true, waitingBehind: 0 });
    expect(after.orderedHead).toBeUndefined();
  });

  it('recovers FAILED deliveries in their order, one at a time, behind what was queued before them', async () => {
    await ordered(['RATE_SPIKE', 'RATE_DROP']);
    const since = new Date(t.clock.now()).toISOString();
    t.receiver.respondWith({ status: 500 });
    await t.publish({ events: [event('RATE_SPIKE'), event('RATE_DROP'), event('RATE_SPIKE')] }).expect(202);
    await t.settle();
    // Each runs its six attempts in turn: the second starts when the first ended FAILED, and so on.
    for (let run = 0; run < 40 && sequences().filter((n) => n === 3).length < 6; run++) {
      t.advance(RETRY_DELAYS_MS.at(-1)! + 60_000);
      await t.runScheduler();
    }
    expect(sequences()).toEqual([1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3]);
    t.advance(60_000);
    t.receiver.clear();
    t.receiver.respondWith({ status: 204 });
    const recovered = await t
      .http()
      .post(`${DELIVERIES}/recover`)
      .set('Authorization', t.bearer(userId))
      .set('Content-Type', 'application/json')
      .send({ since })
      .expect(202);
    expect(recovered.body).toEqual({ queued: 3, more: false });
    t.advance(1_000);
    await t.runScheduler();
    await t.waitForDelivery({ userId, count: 3 });
    expect(sequences()).toEqual([1, 2, 3]);
  });

  it('sends redeliveries in the order they were asked for, behind what was queued before them', async () => {
    await ordered(['RATE_SPIKE']);
    await t.publish({ events: [event(), event()] }).expect(202);
    await t.waitForDelivery({ userId, count: 2 });
    const [second, first] = (await t.http().get(DELIVERIES).set('Authorization', t.bearer(userId)).expect(200)).body.data;
    t.receiver.respondWith({ status: 500 });
    await t.publish(event()).expect(202);
    await t.waitForDelivery({ userId, count: 3 });
    for (const delivery of [second, first])
      await t
        .http()
        .post(`${DELIVERIES}/${delivery.id}/redeliver`)
        .set('Authorization', t.bearer(userId))
        .set('Content-Type', 'application/json')
        .expect(202);
    await t.settle();
    expect(sequences()).toEqual([1, 2, 3]);
    t.receiver.respondWith({ status: 204 });
    await throughRetries(RETRY_DELAYS_MS.slice(0, 1));
    expect(sequences().slice(2)).toEqual([3, 3, 2, 1]);
  });
});
