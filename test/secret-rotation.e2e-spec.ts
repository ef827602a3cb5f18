import type { EventType } from '@funding/notification-webhooks';
import type { ReceivedRequest } from '@funding/notification-webhooks/testing';
import { startTestAppWithKit, type TestAppWithKit } from './support/test-app-with-kit';
import { TEST_DATABASE_KINDS } from './support/test-databases';
import { SETTINGS } from './support/settings-api';

const ROTATE = `${SETTINGS}/webhook/rotate-secret`;
const MINUTE = 60_000;

describe.each(TEST_DATABASE_KINDS)('signing secret rotation on $name', (kind) => {
  let t: TestAppWithKit;
  let user = 0;
  let userId: number;

  beforeAll(async () => {
    t = await startTestAppWithKit(kind);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    userId = ++user;
    t.receiver.clear();
  });

  const put = (body: object) => t.http().put(SETTINGS).set('Authorization', t.bearer(userId)).send(body);
  const enable = (type: `${EventType}` = 'RATE_SPIKE') => t.enableWebhook(userId, type, `/u${userId}`);
  const rotate = (type: string, id = userId) => t.http().post(ROTATE).set('Authorization', t.bearer(id)).send({ type });
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
      webhookSecret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      updatedAt: expect.any(String),
    });
    const newSecret: string = rotated.body.webhookSecret;
    expect(newSecret).not.toBe(oldSecret);

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
