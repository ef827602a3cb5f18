import { verifyWebhookSignature } from '../../src/notifications/delivery/wire/webhook-signature';
import type { EventType } from '../../src/notifications/catalog/event-catalog';
import { SERVICE_VERSION } from '../../src/version';
import { RECEIVER_HOSTNAME, type ReceiverBehaviour } from '@funding/notification-webhooks/testing';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { INTERNAL_EVENTS_PATH } from '../support/test-app-with-kit';
import { DELIVERIES, SETTINGS } from '../support/settings-api';

const MINUTE = 60_000;
const ATTEMPT_TIMEOUT_MS = 1_500;

describeEachDatabase('webhook delivery on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { delivery: { timeoutMs: ATTEMPT_TIMEOUT_MS } });
  let user = 0;
  let userId: number;

  beforeEach(() => {
    userId = ++user;
    t.receiver.clear();
  });

  const enable = (type: `${EventType}` = 'RATE_SPIKE', path = `/u${userId}`) => t.enableWebhook(userId, type, path);
  const event = (overrides: object = {}) => ({
    userId,
    type: 'RATE_SPIKE',
    severity: 'WARNING',
    title: 'Rate spike',
    body: 'USD FRR 0.08%',
    payload: { currency: 'USD', rate: 0.0008 },
    ...overrides,
  });
  const deliveries = async () => (await t.http().get(`${DELIVERIES}`).set('Authorization', t.bearer(userId)).expect(200)).body;

  it('delivers a signed request whose body and headers follow the spec', async () => {
    const secret = await enable();
    const published = await t.publish(event({ createdAt: '2026-11-22T11:59:00.000Z' })).expect(202);
    expect(published.body).toEqual({ eventIds: [expect.stringMatching(/^[0-9a-f-]{36}$/)], queuedDeliveries: 1 });

    const [request] = await t.waitForDelivery({ userId });
    const raw = request.rawBody.toString('utf8');
    expect(request.method).toBe('POST');
    expect(request.path).toBe(`/u${userId}`);
    expect(JSON.parse(raw)).toEqual({
      type: 'RATE_SPIKE',
      severity: 'WARNING',
      title: 'Rate spike',
      body: 'USD FRR 0.08%',
      createdAt: '2026-11-22T11:59:00.000Z',
      payload: { currency: 'USD', rate: 0.0008 },
      userId,
    });
    expect(request.headers).toMatchObject({
      'content-type': 'application/json',
      'x-service-type': 'RATE_SPIKE',
      'user-agent': `Service/${SERVICE_VERSION} (+https://funding.example.com)`,
      'x-service-event-id': published.body.eventIds[0],
      'x-service-timestamp': String(Math.floor(t.clock.now() / 1000)),
    });
    expect(request.headers['x-service-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    const verified = verifyWebhookSignature({
      secret,
      timestamp: request.headers['x-service-timestamp'] as string,
      signature: request.headers['x-service-signature'] as string,
      rawBody: request.rawBody,
      toleranceSeconds: 300,
      now: t.clock.now(),
    });
    expect(verified).toBe(true);

    const log = await deliveries();
    expect(log.data).toEqual([
      expect.objectContaining({ status: 'DELIVERED', attemptCount: 1, lastStatusCode: 204, eventId: published.body.eventIds[0] }),
    ]);
  });

  it('sends exactly the request the OpenAPI document describes under webhooks', async () => {
    await enable();
    await t
      .publish(event())
      .set('traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')
      .set('tracestate', 'rojo=00f067aa0ba902b7')
      .expect(202);
    const [request] = await t.waitForDelivery({ userId });

    const document = (await t.http().get('/api/docs-json').expect(200)).body;
    const operation = document.webhooks.fundingEvent.post;
    const bodySchema = document.components.schemas[operation.requestBody.content['application/json'].schema.$ref.split('/').pop()];
    expect(Object.keys(JSON.parse(request.rawBody.toString())).sort()).toEqual(Object.keys(bodySchema.properties).sort());
    expect(bodySchema.required.sort()).toEqual(Object.keys(bodySchema.properties).sort());
    for (const header of operation.parameters) {
      const value = request.headers[header.name.toLowerCase()] as string;
      expect(value, header.name).toBeDefined();
      if (header.schema.enum) expect(header.schema.enum).toContain(value);
      if (header.schema.pattern) expect(value).toMatch(new RegExp(header.schema.pattern));
      if (header.schema.type === 'integer') expect(value).toMatch(/^[0-9]+$/);
    }
  });

  it.each([
    [
      'answers 302',
      { redirectTo: 'https://127.0.0.1:1/elsewhere' },
      { outcome: 'http_error', statusCode: 302, error: 'redirect (302) not followed' },
    ],
    ['never answers', 'hang', { outcome: 'timeout', statusCode: null }],
    [
      'resets the connection',
      'reset',
      { outcome: 'connect_error', error: expect.stringMatching(/^connection (reset|closed) by the receiver$/) },
    ],
  ] as const)('retries a receiver that %s, then delivers when it recovers', async (_, behaviour, failedAttempt) => {
    await enable();
    t.receiver.respondWith(behaviour as ReceiverBehaviour);
    const published = await t.publish(event()).expect(202);
    await t.waitForDelivery({ userId });
    const [pending] = (await deliveries()).data;
    expect(pending).toMatchObject({ status: 'PENDING', attemptCount: 1, nextAttemptAt: new Date(t.clock.now() + MINUTE).toISOString() });

    t.receiver.respondWith({ status: 200 });
    t.advance(MINUTE);
    await t.runScheduler();

    const [retry] = t.receiver.requests.slice(1);
    expect(retry.headers).toMatchObject({ 'x-service-event-id': published.body.eventIds[0], 'x-service-attempt': '2' });
    const detail = await t.http().get(`${DELIVERIES}/${pending.id}`).set('Authorization', t.bearer(userId)).expect(200);
    expect(detail.body).toMatchObject({ status: 'DELIVERED', attemptCount: 2, lastStatusCode: 200 });
    expect(detail.body.attempts[0]).toMatchObject(failedAttempt);
    expect(detail.body.attempts[0].durationMs).toBeLessThan(ATTEMPT_TIMEOUT_MS + 1_000);
    expect(detail.body.attempts[1]).toMatchObject({ outcome: 'success', statusCode: 200 });
  });

  it('queues nothing for types without an enabled webhook', async () => {
    await enable('RATE_SPIKE');
    const published = await t.publish({ events: [event({ type: 'RATE_DROP' }), event({ userId: userId + 500 })] }).expect(202);
    expect(published.body.queuedDeliveries).toBe(0);
    expect(published.body.eventIds).toHaveLength(2);
    expect(await t.runScheduler()).toBe(0);
    expect(t.receiver.requests).toHaveLength(0);
  });

  it('retries a failing receiver on the exact schedule and marks the delivery FAILED after 6 attempts', async () => {
    const secret = await enable();
    t.receiver.respondWith({ status: 500, body: 'upstream broke' });
    await t.publish(event()).expect(202);
    await t.waitForDelivery({ userId });

    for (const delay of [1, 5, 15, 60, 240].map((minutes) => minutes * MINUTE)) {
      const before = t.receiver.requests.length;
      t.advance(delay - 1000);
      await t.runScheduler();
      expect(t.receiver.requests).toHaveLength(before);
      t.advance(1000);
      await t.runScheduler();
      expect(t.receiver.requests).toHaveLength(before + 1);
    }
    t.advance(24 * 60 * MINUTE);
    await t.runScheduler();
    expect(t.receiver.requests).toHaveLength(6);
    expect(new Set(t.receiver.requests.map((r) => r.headers['x-service-event-id'])).size).toBe(1);

    const [delivery] = (await deliveries()).data;
    expect(delivery).toMatchObject({ status: 'FAILED', attemptCount: 6, nextAttemptAt: null, lastStatusCode: 500 });
    const detail = await t.http().get(`${DELIVERIES}/${delivery.id}`).set('Authorization', t.bearer(userId)).expect(200);
    expect(detail.body.attempts.map((a: { attemptNumber: number }) => a.attemptNumber)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(detail.body.attempts[0]).toMatchObject({ outcome: 'http_error', statusCode: 500, responseExcerpt: 'upstream broke' });
    const starts = detail.body.attempts.map((a: { startedAt: string }) => Date.parse(a.startedAt));
    expect(starts.slice(1).map((s: number, i: number) => s - starts[i])).toEqual([1, 5, 15, 60, 240].map((m) => m * MINUTE));
    // Each attempt is stamped and signed when it is sent: a receiver that refuses stamps older than 5 minutes takes them all.
    t.receiver.requests.forEach((request, i) => {
      const timestamp = request.headers['x-service-timestamp'] as string;
      expect(timestamp).toBe(String(Math.floor(starts[i] / 1000)));
      const signature = request.headers['x-service-signature'] as string;
      expect(
        verifyWebhookSignature({ secret, timestamp, signature, rawBody: request.rawBody, toleranceSeconds: 300, now: starts[i] }),
      ).toBe(true);
    });

    await t
      .http()
      .get(`${DELIVERIES}/${delivery.id}`)
      .set('Authorization', t.bearer(userId + 1000))
      .expect(404);
  });

  it("sends a pending retry to the URL the user saved since, signed with the webhook's one secret through disable and re-enable", async () => {
    const secret = await enable('RATE_SPIKE', `/old${userId}`);
    const save = (body: object) =>
      t
        .http()
        .put(SETTINGS)
        .set('Authorization', t.bearer(userId))
        .send({ type: 'RATE_SPIKE', channel: 'WEBHOOK', ...body })
        .expect(200);
    t.receiver.respondNext([{ status: 503 }]);
    await t.publish(event()).expect(202);
    await t.waitForDelivery({ userId });
    const moved = await save({ enabled: true, webhookUrl: t.receiver.url(`/new${userId}`) });
    expect(moved.body).not.toHaveProperty('webhookSecret');

    t.advance(MINUTE);
    await t.runScheduler();
    await save({ enabled: false });
    await save({ enabled: true, webhookUrl: t.receiver.url(`/new${userId}`) });
    await t.publish(event()).expect(202);
    const requests = await t.waitForDelivery({ userId, count: 3 });

    expect(requests.map((request) => request.path)).toEqual([`/old${userId}`, `/new${userId}`, `/new${userId}`]);
    for (const request of requests) {
      const timestamp = request.headers['x-service-timestamp'] as string;
      const signature = request.headers['x-service-signature'] as string;
      expect(
        verifyWebhookSignature({ secret, timestamp, signature, rawBody: request.rawBody, toleranceSeconds: 300, now: t.clock.now() }),
      ).toBe(true);
    }
  });

  it('cancels a due retry without a request once the user disabled the webhook', async () => {
    await enable();
    t.receiver.respondWith({ status: 503 });
    await t.publish(event()).expect(202);
    await t.waitForDelivery({ userId });
    await t
      .http()
      .put(SETTINGS)
      .set('Authorization', t.bearer(userId))
      .send({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: false })
      .expect(200);
    t.advance(MINUTE);
    await t.runScheduler();
    expect(t.receiver.requests).toHaveLength(1);
    expect((await deliveries()).data[0]).toMatchObject({ status: 'CANCELLED', attemptCount: 1 });
  });

  it('redelivers the same event with the same event id', async () => {
    await enable();
    await t.publish(event()).expect(202);
    const [first] = await t.waitForDelivery({ userId });
    const [delivery] = (await deliveries()).data;
    await t
      .http()
      .post(`${DELIVERIES}/${delivery.id}/redeliver`)
      .set('Authorization', t.bearer(userId))
      .set('Content-Type', 'application/json')
      .expect(202);
    const [, second] = await t.waitForDelivery({ userId, count: 2 });
    expect(second.headers['x-service-event-id']).toBe(first.headers['x-service-event-id']);
    expect(second.rawBody.equals(first.rawBody)).toBe(true);
    await t
      .http()
      .post(`${DELIVERIES}/${delivery.id}/redeliver`)
      .set('Authorization', t.bearer(userId + 1000))
      .set('Content-Type', 'application/json')
      .expect(404);
  });

  it('answers 409 to a redeliver of a delivery still PENDING, and starts no second cycle', async () => {
    await enable();
    t.receiver.respondWith({ status: 500 });
    await t.publish(event()).expect(202);
    await t.waitForDelivery({ userId });
    const [delivery] = (await deliveries()).data;
    expect(delivery).toMatchObject({ status: 'PENDING', attemptCount: 1 });
    const conflict = await t
      .http()
      .post(`${DELIVERIES}/${delivery.id}/redeliver`)
      .set('Authorization', t.bearer(userId))
      .set('Content-Type', 'application/json')
      .expect(409);
    expect(conflict.body).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: `Delivery ${delivery.id} is still PENDING: its retry cycle is running (1 of 6 attempts made, next at ${delivery.nextAttemptAt}); redeliver it once it is DELIVERED, FAILED or CANCELLED`,
    });
    await t.settle();
    expect((await deliveries()).data).toHaveLength(1);
    expect(t.receiver.requests).toHaveLength(1);
    t.receiver.respondWith({ status: 200 });
  });

  it('sends a signed test event on demand and reports the outcome', async () => {
    const secret = await enable('LOAN_EXECUTED');
    t.receiver.respondWith({ status: 200, body: 'ok' });
    const result = await t
      .http()
      .post(`${SETTINGS}/webhook/test`)
      .set('Authorization', t.bearer(userId))
      .send({ type: 'LOAN_EXECUTED' })
      .expect(200);
    // Exactly TestSendResultDto's fields: nothing the sender keeps for the engine (e.g. when the request was written).
    expect(result.body).toEqual({
      success: true,
      outcome: 'success',
      statusCode: 200,
      durationMs: expect.any(Number),
      error: null,
      responseExcerpt: 'ok',
    });
    const [request] = t.receiver.requests;
    expect(JSON.parse(request.rawBody.toString()).payload).toEqual({ test: true });
    expect(request.headers['x-service-event-id']).toMatch(/^test_/);
    expect(request.isSignedWith(secret, { toleranceSeconds: 300, now: t.clock.now() })).toBe(true);
    await t.http().post(`${SETTINGS}/webhook/test`).set('Authorization', t.bearer(userId)).send({ type: 'RATE_DROP' }).expect(400);
  });

  describe('internal events endpoint', () => {
    it.each([
      ['no token', undefined],
      ['a wrong token', 'Bearer wrong-token'],
      ['a user JWT', 'user'],
    ])('answers 401 with %s', async (_, authorization) => {
      const call = t.http().post(INTERNAL_EVENTS_PATH);
      if (authorization) call.set('Authorization', authorization === 'user' ? t.bearer(userId) : authorization);
      await call.send(event()).expect(401);
    });

    it('answers 400 naming the field of the bad event', async () => {
      const response = await t.publish({ events: [event(), event({ severity: 'LOUD' })] }).expect(400);
      expect(response.body.errors).toEqual([{ field: 'events[1].severity', message: 'must be one of INFO, WARNING, ERROR' }]);
      const single = await t.publish(event({ type: 'NOPE' })).expect(400);
      expect(single.body.errors).toEqual([{ field: 'type', message: 'must be a known event type' }]);
    });

    it('refuses more than 1000 events', async () => {
      const response = await t.publish({ events: Array.from({ length: 1001 }, () => event()) }).expect(400);
      expect(response.body.errors[0]).toEqual({ field: 'events', message: 'must contain at most 1000 events' });
    });
  });
});

describeEachDatabase('delivery-time address check on $name', (kind) => {
  const answers: string[][] = [];
  // Public when the URL is saved, loopback (not allow-listed here) when the delivery connects.
  const t = appWithKitPerSuite(kind, { allowedCidrs: [], resolver: async () => answers.shift() ?? ['127.0.0.1'] });

  it('fails an attempt whose host rebinds to a blocked address, without a packet reaching it', async () => {
    answers.push(['93.184.216.34']);
    await t
      .http()
      .put(SETTINGS)
      .set('Authorization', t.bearer(1))
      .send({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: `https://${RECEIVER_HOSTNAME}:${t.receiver.port}/hook` })
      .expect(200);
    await t.publish({ userId: 1, type: 'RATE_SPIKE', severity: 'INFO', title: 'Rate spike', body: 'USD' }).expect(202);
    await t.settle();
    const [delivery] = (await t.http().get(`${DELIVERIES}`).set('Authorization', t.bearer(1)).expect(200)).body.data;
    expect(delivery).toMatchObject({ status: 'PENDING', attemptCount: 1, lastStatusCode: null });
    const detail = await t.http().get(`${DELIVERIES}/${delivery.id}`).set('Authorization', t.bearer(1)).expect(200);
    expect(detail.body.attempts[0]).toMatchObject({
      outcome: 'blocked',
      error: 'blocked: must not resolve to an address that is not public',
    });
    expect(t.receiver.connections).toBe(0);
  });
});
