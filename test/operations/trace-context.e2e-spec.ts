import type { AddressInfo } from 'node:net';
import type { ReceivedRequest } from '@funding/notification-webhooks/testing';
import { InvalidFieldsException } from '../../src/notifications/common/api/api-errors';
import { WebhookEvent } from '../../src/notifications/delivery/entities/webhook-event.entity';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { INTERNAL_API_TOKEN } from '../support/test-app-with-kit';
import { publisherClient } from '../support/typed-client/publisher-client';

const MINUTE = 60_000;
const DELIVERIES = '/api/v1/settings/notifications/webhook-deliveries';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;
const TRACEPARENT_FORMAT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-(0[01])$/;

/** The trace id, span id and flags of a received `traceparent`. */
function traceparentOf(request: ReceivedRequest): { traceId: string; spanId: string; flags: string } {
  const value = request.headers.traceparent;
  expect(value, request.describe()).toMatch(TRACEPARENT_FORMAT);
  const [, traceId, spanId, flags] = TRACEPARENT_FORMAT.exec(value as string)!;
  return { traceId, spanId, flags };
}

describeEachDatabase('trace context on $name', (kind) => {
  const t = appWithKitPerSuite(kind);
  let user = 0;
  let userId: number;
  let secret: string;

  beforeAll(async () => {
    await t.app.listen(0, '127.0.0.1');
  });
  beforeEach(async () => {
    userId = ++user;
    t.receiver.clear();
    secret = await t.enableWebhook(userId, 'LOAN_EXECUTED', `/u${userId}`);
  });

  const event = (title = 'Loan executed') => ({ userId, type: 'LOAN_EXECUTED', severity: 'INFO', title, body: '1000 USD' });
  const storedEvent = async (id: string) => (await t.dataSource.getRepository(WebhookEvent).findOneByOrFail({ id }))!;

  it('sends every attempt as a child span of the publish: its trace id and flags, a span id of its own per attempt', async () => {
    t.receiver.respondNext([{ status: 500 }]);
    const published = await t
      .publish(event())
      .set('traceparent', TRACEPARENT)
      .set('tracestate', 'rojo=00f067aa0ba902b7, congo=t61rcWkgMzE')
      .expect(202);
    const [first] = await t.waitForDelivery({ userId });
    t.advance(MINUTE);
    await t.runScheduler();
    const [, second] = await t.waitForDelivery({ userId, count: 2 });
    expect([first.attempt, second.attempt]).toEqual([1, 2]);

    const spans = [first, second].map(traceparentOf);
    expect(spans.map(({ traceId, flags }) => [traceId, flags])).toEqual([
      [TRACE_ID, '01'],
      [TRACE_ID, '01'],
    ]);
    expect(new Set([PARENT_ID, ...spans.map(({ spanId }) => spanId)]).size).toBe(3);
    expect([first, second].map((request) => request.headers.tracestate)).toEqual([
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    ]);
    // The trace headers are not signed: both schemes verify as without them.
    for (const request of [first, second]) expect(request.isSignedWith(secret)).toBe(true);
    expect(await storedEvent(published.body.eventIds[0])).toMatchObject({
      traceparent: TRACEPARENT,
      tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    });
  });

  it('keeps the sampled flag as sent, and stores a later version as version 00 with the flags level 1 defines', async () => {
    await t.publish(event()).set('traceparent', `00-${TRACE_ID}-${PARENT_ID}-00`).expect(202);
    const future = await t.publish(event('future')).set('traceparent', `7f-${TRACE_ID}-${PARENT_ID}-03-more`).expect(202);
    const requests = await t.waitForDelivery({ userId, count: 2 });
    const flags = Object.fromEntries(requests.map((request) => [request.json().title, traceparentOf(request).flags]));
    expect(flags).toEqual({ 'Loan executed': '00', future: '01' });
    expect((await storedEvent(future.body.eventIds[0])).traceparent).toBe(`00-${TRACE_ID}-${PARENT_ID}-01`);
  });

  it.each([
    ['upper-case hex', TRACEPARENT.toUpperCase()],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT_ID}-01`],
    ['version ff', `ff-${TRACE_ID}-${PARENT_ID}-01`],
    ['garbage', 'not a traceparent'],
  ])('ignores an invalid traceparent header (%s) and its tracestate: the publish succeeds, untraced', async (_, invalid) => {
    const published = await t.publish(event()).set('traceparent', invalid).set('tracestate', 'rojo=1').expect(202);
    const [request] = await t.waitForDelivery({ userId });
    expect(request.headers.traceparent).toBeUndefined();
    expect(request.headers.tracestate).toBeUndefined();
    expect(await storedEvent(published.body.eventIds[0])).toMatchObject({ traceparent: null, tracestate: null });
  });

  it('drops an invalid tracestate and keeps its valid traceparent', async () => {
    await t.publish(event()).set('traceparent', TRACEPARENT).set('tracestate', 'Upper=case').expect(202);
    const [request] = await t.waitForDelivery({ userId });
    expect(traceparentOf(request).traceId).toBe(TRACE_ID);
    expect(request.headers.tracestate).toBeUndefined();
  });

  it('sends no traceparent for an event published without one', async () => {
    await t.publish(event()).expect(202);
    const [request] = await t.waitForDelivery({ userId });
    expect(request.headers.traceparent).toBeUndefined();
  });

  it('keeps the trace id on a redelivery, under a new span id', async () => {
    await t.publish(event()).set('traceparent', TRACEPARENT).expect(202);
    const [first] = await t.waitForDelivery({ userId });
    const [delivery] = (await t.http().get(DELIVERIES).set('Authorization', t.bearer(userId)).expect(200)).body.data;
    await t
      .http()
      .post(`${DELIVERIES}/${delivery.id}/redeliver`)
      .set('Authorization', t.bearer(userId))
      .set('Content-Type', 'application/json')
      .expect(202);
    const [, again] = await t.waitForDelivery({ userId, count: 2 });
    expect(again.eventId).toBe(first.eventId);
    expect(traceparentOf(again).traceId).toBe(TRACE_ID);
    expect(traceparentOf(again).spanId).not.toBe(traceparentOf(first).spanId);
  });

  it('takes traceparent and tracestate as options of an in-process publish', async () => {
    await t.publisher.publish(event() as never, { traceparent: TRACEPARENT, tracestate: 'rojo=1' });
    const [request] = await t.waitForDelivery({ userId });
    expect(traceparentOf(request)).toMatchObject({ traceId: TRACE_ID, flags: '01' });
    expect(request.headers.tracestate).toBe('rojo=1');
  });

  it('the typed client passes the trace headers on, with its idempotency key', async () => {
    const client = publisherClient(`http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`, INTERNAL_API_TOKEN);
    const trace = { traceparent: TRACEPARENT, tracestate: 'rojo=1' };
    expect(await client.publishSafely({ events: [event() as never] }, { trace })).toMatchObject({ ok: true, status: 202 });
    const [request] = await t.waitForDelivery({ userId });
    expect(traceparentOf(request).traceId).toBe(TRACE_ID);
    expect(request.headers.tracestate).toBe('rojo=1');
  });

  it.each([
    ['an invalid traceparent', { traceparent: TRACEPARENT.toUpperCase() }, 'traceparent'],
    ['an invalid tracestate', { traceparent: TRACEPARENT, tracestate: 'rojo' }, 'tracestate'],
    ['a tracestate without traceparent', { tracestate: 'rojo=1' }, 'tracestate'],
  ])('refuses %s given in-process with a 400 naming the option, storing nothing', async (_, options, field) => {
    const error = await t.publisher.publish(event() as never, options).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(InvalidFieldsException);
    expect((error as InvalidFieldsException).fieldErrors.map((e) => e.field)).toEqual([field]);
    expect(await t.dataSource.getRepository(WebhookEvent).countBy({ userId })).toBe(0);
  });
});
