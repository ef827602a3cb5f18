import type { EventType } from '@funding/notification-webhooks';
import type { ReceivedRequest } from '@funding/notification-webhooks/testing';
import { Webhook } from 'standardwebhooks';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { SETTINGS } from '../support/settings-api';

const ROTATE = `${SETTINGS}/webhook/rotate-secret`;
const MINUTE = 60_000;

describeEachDatabase('signing secret rotation on $name', (kind) => {
  const t = appWithKitPerSuite(kind);
  let user = 0;
  let userId: number;

  beforeEach(() => {
    userId = ++user;
    t.receiver.clear();
  });

  const put = (body: object) => t.http().put(SETTINGS).set('Authorization', t.bearer(userId)).send(body);
  const enable = (type: `${EventType}` = 'RATE_SPIKE') => t.enableWebhook(userId, type, `/u${userId}`);
  const rotate = (type: string, id = userId, options: object = {}) =>
    t
      .http()
      .post(ROTATE)
      .set('Authorization', t.bearer(id))
      .send({ type, ...options });
  /** The Standard Webhooks signatures of a request that `secret` verifies (the official library's check, at the test clock). */
  const standardWebhooksVerifies = (secret: string, request: ReceivedRequest) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(t.clock.now());
    try {
      new Webhook(secret).verify(request.rawBody, request.headers as Record<string, string>);
      return true;
    } catch {
      return false;
    } finally {
      vi.useRealTimers();
    }
  };
  const publish = () =>
    t.publish({ userId, type: 'RATE_SPIKE', severity: 'INFO', title: 'Rate spike', body: 'USD FRR up', payload: {} }).expect(202);
  const signedWith = (secret: string, request: ReceivedRequest) =>
    request.isSignedWith(secret, { toleranceSeconds: 300, now: t.clock.now() });

  it('returns a new secret once, and the very next attempt (a pending retry) is signed with it, not the old one', async () => {
    const oldSecret = await enable();
    t.receiver.respondWith({ status: 503 });
    await publish();
    const [first] = await t.waitForDelivery({ userId });
    expect(signedWith(oldSecret, first)).toBe(true);

    const rotated = await rotate('RATE_SPIKE').expect(200);
    expect(rotated.body).toEqual({
      type: 'RATE_SPIKE',
      channel: 'WEBHOOK',
      enabled: true,
      webhookUrl: t.receiver.url(`/u${userId}`),
      hasWebhookSecret: true,
      orderedDelivery: false,
      signatureSchemes: ['hmac'],
      webhookSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      previousSecretValidUntil: null,
      updatedAt: expect.any(String),
    });
    const newSecret: string = rotated.body.webhookSecret;
    expect(newSecret).not.toBe(oldSecret);
    expect(rotated.body.previousSecretValidUntil).toBeNull();

    t.receiver.respondWith({ status: 204 });
    t.advance(MINUTE);
    await t.runScheduler();
    const [, retry] = await t.waitForDelivery({ userId, count: 2 });
    expect(retry.headers['x-service-attempt']).toBe('2');
    expect(signedWith(newSecret, retry)).toBe(true);
    expect(signedWith(oldSecret, retry)).toBe(false);

    const list = await t.http().get(SETTINGS).set('Authorization', t.bearer(userId)).expect(200);
    const effective = await t.http().get(`${SETTINGS}/effective`).set('Authorization', t.bearer(userId)).expect(200);
    for (const body of [list.text, effective.text]) expect(body).not.toContain(newSecret.slice(6));
    expect(JSON.stringify(await t.dataSource.query('SELECT * FROM webhook_signing_secrets'))).not.toContain(newSecret.slice(6));
  });

  it('with overlapHours, signs webhook-signature with the old secret too until the overlap ends; X-Service-Signature with the new one only', async () => {
    const oldSecret = await enable('RATE_SPIKE');
    const rotated = await rotate('RATE_SPIKE', userId, { overlapHours: 24 }).expect(200);
    const newSecret: string = rotated.body.webhookSecret;
    expect(rotated.body.previousSecretValidUntil).toBe(new Date(t.clock.now() + 24 * 60 * MINUTE).toISOString());

    await publish();
    const [during] = await t.waitForDelivery({ userId });
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(standardWebhooksVerifies(oldSecret, during)).toBe(true);
    expect(standardWebhooksVerifies(newSecret, during)).toBe(true);
    expect(signedWith(newSecret, during)).toBe(true);
    expect(signedWith(oldSecret, during)).toBe(false);
    expect(JSON.stringify(await t.dataSource.query('SELECT * FROM webhook_signing_secrets'))).not.toContain(oldSecret.slice(6));

    t.advance(24 * 60 * MINUTE);
    await publish();
    const [, after] = await t.waitForDelivery({ userId, count: 2 });
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(standardWebhooksVerifies(oldSecret, after)).toBe(false);
    expect(standardWebhooksVerifies(newSecret, after)).toBe(true);
  });

  it('with no overlap, signs webhook-signature with the new secret only, and a later rotation drops an overlap that was running', async () => {
    const oldSecret = await enable('RATE_SPIKE');
    const middle: string = (await rotate('RATE_SPIKE', userId, { overlapHours: 1 }).expect(200)).body.webhookSecret;
    const rotated = await rotate('RATE_SPIKE').expect(200);
    expect(rotated.body.previousSecretValidUntil).toBeNull();
    await publish();
    const [request] = await t.waitForDelivery({ userId });
    expect(standardWebhooksVerifies(rotated.body.webhookSecret, request)).toBe(true);
    expect(standardWebhooksVerifies(middle, request)).toBe(false);
    expect(standardWebhooksVerifies(oldSecret, request)).toBe(false);
  });

  it.each([
    [-1, 'must be at least 0'],
    [169, 'must be at most 168'],
    [1.5, 'must be an integer'],
    ['24', 'must be an integer'],
  ])('answers 400 naming overlapHours for %j', async (overlapHours, message) => {
    await enable('RATE_SPIKE');
    const response = await rotate('RATE_SPIKE', userId, { overlapHours }).expect(400);
    expect(response.body.errors).toContainEqual({ field: 'overlapHours', message });
    expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual(response.body.errors.map(() => 'overlapHours'));
  });

  it('signs test sends with the rotated secret too', async () => {
    const oldSecret = await enable('LOAN_EXECUTED');
    const newSecret: string = (await rotate('LOAN_EXECUTED').expect(200)).body.webhookSecret;
    await t.http().post(`${SETTINGS}/webhook/test`).set('Authorization', t.bearer(userId)).send({ type: 'LOAN_EXECUTED' }).expect(200);
    const [request] = t.receiver.requests;
    expect(signedWith(newSecret, request)).toBe(true);
    expect(signedWith(oldSecret, request)).toBe(false);
  });

  it('answers 404 when the type has no webhook configured, also for another user', async () => {
    await enable('RATE_SPIKE');
    const missing = await rotate('RATE_DROP').expect(404);
    expect(missing.body).toEqual({ statusCode: 404, error: 'Not Found', message: 'No webhook is configured for RATE_DROP' });
    await put({ type: 'RATE_DROP', channel: 'IN_APP', enabled: true }).expect(200);
    await rotate('RATE_DROP').expect(404);
    await rotate('RATE_SPIKE', userId + 1000).expect(404);
  });

  it.each(['NOPE', 'HIGH_UTILIZATION'])('answers 400 naming the field for %s, not a type that can use WEBHOOK', async (type) => {
    const response = await rotate(type).expect(400);
    expect(response.body.errors).toEqual([
      {
        field: 'type',
        message:
          'must be an event type that can be delivered to a webhook (not EARNINGS_MILESTONE, HIGH_UTILIZATION, OFFER_FILLED, WITHDRAWAL_DETECTED)',
      },
    ]);
  });

  it('gives a webhook saved disabled its first secret, which a later enable does not reveal again', async () => {
    await put({ type: 'IDLE_CASH', channel: 'WEBHOOK', enabled: false, webhookUrl: t.receiver.url() }).expect(200);
    const rotated = await rotate('IDLE_CASH').expect(200);
    expect(rotated.body).toMatchObject({ enabled: false, hasWebhookSecret: true, webhookSecret: expect.stringMatching(/^whsec_/) });
    const enabled = await put({ type: 'IDLE_CASH', channel: 'WEBHOOK', enabled: true, webhookUrl: t.receiver.url() }).expect(200);
    expect(enabled.body).not.toHaveProperty('webhookSecret');
    expect(enabled.body.hasWebhookSecret).toBe(true);
  });
});
