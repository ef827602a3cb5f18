import type { EventType } from '../../src/notifications/catalog/event-catalog';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { DELIVERIES } from '../support/settings-api';

const MINUTE = 60_000;

describeEachDatabase('sequence numbers per user and webhook URL on $name', (kind) => {
  const t = appWithKitPerSuite(kind);
  let user = 0;
  let userId: number;

  beforeEach(() => {
    userId = ++user;
    t.receiver.clear();
    t.receiver.respondWith({ status: 204 });
  });

  const event = (type: `${EventType}`) => ({ userId, type, severity: 'INFO', title: type, body: type, payload: {} });
  const sequenceOf = (request: { headers: Record<string, unknown> }) => request.headers['x-service-sequence'];
  const log = async () => (await t.http().get(DELIVERIES).set('Authorization', t.bearer(userId)).expect(200)).body.data;

  it('numbers deliveries in publish order per URL, across the types that share it, the same on every attempt and redelivery', async () => {
    await t.enableWebhook(userId, 'RATE_SPIKE', `/u${userId}`);
    await t.enableWebhook(userId, 'RATE_DROP', `/u${userId}`);
    await t.enableWebhook(userId, 'LOAN_EXECUTED', `/u${userId}/loans`);
    const types = ['RATE_SPIKE', 'LOAN_EXECUTED', 'RATE_DROP', 'RATE_SPIKE'] as const;
    const published = await t.publish({ events: types.map(event) }).expect(202);
    const requests = await t.waitForDelivery({ userId, count: 4 });
    const byEvent = new Map(requests.map((request) => [request.headers['x-service-event-id'], request]));
    const [spike, loan, drop, spikeAgain] = published.body.eventIds.map((id: string) => byEvent.get(id)!);
    expect([spike, drop, spikeAgain].map(sequenceOf)).toEqual(['1', '2', '3']);
    expect(sequenceOf(loan)).toBe('1');

    t.receiver.respondWith({ status: 500 });
    await t.publish(event('RATE_DROP')).expect(202);
    const [failed] = (await t.waitForDelivery({ userId, count: 5 })).slice(4);
    expect(sequenceOf(failed)).toBe('4');
    t.receiver.respondWith({ status: 204 });
    t.advance(MINUTE);
    await t.runScheduler();
    const [retry] = (await t.waitForDelivery({ userId, count: 6 })).slice(5);
    expect(retry.headers).toMatchObject({ 'x-service-attempt': '2', 'x-service-sequence': '4' });

    const first = (await log()).find((delivery: { eventId: string }) => delivery.eventId === published.body.eventIds[0]);
    expect(first).toMatchObject({ status: 'DELIVERED', sequence: 1 });
    await t
      .http()
      .post(`${DELIVERIES}/${first.id}/redeliver`)
      .set('Authorization', t.bearer(userId))
      .set('Content-Type', 'application/json')
      .expect(202);
    const [redelivered] = (await t.waitForDelivery({ userId, count: 7 })).slice(6);
    expect(redelivered.headers).toMatchObject({ 'x-service-event-id': published.body.eventIds[0], 'x-service-sequence': '1' });
    expect((await log()).map((delivery: { sequence: number }) => delivery.sequence)).toEqual([1, 4, 3, 2, 1, 1]);
  });

  it('a new URL counts from 1; going back to a URL goes on where it stopped', async () => {
    await t.enableWebhook(userId, 'RATE_SPIKE', `/u${userId}/a`);
    await t.publish({ events: [event('RATE_SPIKE'), event('RATE_SPIKE')] }).expect(202);
    await t.waitForDelivery({ userId, count: 2 });
    await t.enableWebhook(userId, 'RATE_SPIKE', `/u${userId}/b`);
    await t.publish(event('RATE_SPIKE')).expect(202);
    await t.waitForDelivery({ userId, count: 3 });
    await t.enableWebhook(userId, 'RATE_SPIKE', `/u${userId}/a`);
    await t.publish(event('RATE_SPIKE')).expect(202);
    const requests = await t.waitForDelivery({ userId, count: 4 });
    expect(requests.map((request) => `${request.path} ${sequenceOf(request)}`).sort()).toEqual(
      [`/u${userId}/a 1`, `/u${userId}/a 2`, `/u${userId}/a 3`, `/u${userId}/b 1`].sort(),
    );
    expect(`${requests[3].path} ${sequenceOf(requests[3])}`).toBe(`/u${userId}/a 3`);
  });
});
