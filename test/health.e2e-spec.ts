import { DataSource } from 'typeorm';
import { DeliveryWorker } from '../src/notifications/delivery/delivery-worker';
import { startTestApp, type TestApp } from './support/test-app';
import { TEST_DATABASE_KINDS } from './support/test-databases';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver';

const INTERNAL_TOKEN = 'internal-token-0123456789abcdef0123456789';

describe.each(TEST_DATABASE_KINDS)('health probes on $name', (kind) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  /** Asks for readiness until it fails; resolves with that answer, or with null if the shutdown ended first. */
  async function readinessDuring(closing: Promise<void>) {
    let closed = false;
    void closing.then(() => (closed = true));
    while (!closed) {
      const response = await t.http().get('/health/ready');
      if (response.status !== 200) return { response, live: await t.http().get('/health/live') };
    }
    return null;
  }

  it('answers live and ready while the database answers', async () => {
    t = await startTestApp(kind);
    const live = await t.http().get('/health/live').expect(200);
    expect(live.body).toEqual({ status: 'ok', info: {}, error: {}, details: {} });
    const ready = await t.http().get('/health/ready').expect(200);
    expect(ready.body).toMatchObject({ status: 'ok', details: { shutdown: { status: 'up' }, database: { status: 'up' } } });
  });

  it('is not ready, but live, when the database is unreachable', async () => {
    t = await startTestApp(kind);
    await t.app.get(DataSource).destroy();
    const ready = await t.http().get('/health/ready').expect(503);
    expect(ready.body).toMatchObject({ status: 'error', error: { database: { status: 'down' } }, info: { shutdown: { status: 'up' } } });
    await t.http().get('/health/live').expect(200);
  });

  it('turns ready to 503 as soon as shutdown begins, and keeps serving for the configured delay', async () => {
    t = await startTestApp(kind, {}, { config: { shutdownReadinessDelayMs: 2000 } });
    await t.http().get('/health/ready').expect(200);
    const started = performance.now();
    const closing = t.app.close();
    const during = await readinessDuring(closing);
    const settings = await t.http().get('/api/v1/settings/notifications').set('Authorization', t.bearer(1));
    await closing;
    expect(during?.response.status).toBe(503);
    expect(during?.response.body).toMatchObject({ status: 'error', error: { shutdown: { status: 'down', reason: 'shutting down' } } });
    expect(during?.live.status).toBe(200);
    expect(settings.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(1900);
  });

  describe('with an attempt in flight', () => {
    let receiver: WebhookReceiver;
    beforeAll(async () => {
      receiver = await startWebhookReceiver();
    });
    afterAll(async () => {
      await receiver.close();
    });

    it('stays unready while the delivery workers drain', async () => {
      t = await startTestApp(kind, { allowedCidrs: ['127.0.0.0/8'], extraCaPem: receiver.caPem, internalApiToken: INTERNAL_TOKEN, delivery: { timeoutMs: 1500 } });
      const bearer = t.bearer(1);
      await t.http().put('/api/v1/settings/notifications').set('Authorization', bearer).send({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: receiver.url('/slow') }).expect(200);
      receiver.respondWith('hang');
      await t
        .http()
        .post('/api/v1/internal/notifications/events')
        .set('Authorization', `Bearer ${INTERNAL_TOKEN}`)
        .send({ userId: 1, type: 'RATE_SPIKE', severity: 'INFO', title: 'Spike', body: 'USD' })
        .expect(202);
      await receiver.waitForRequests(1);

      const closing = t.app.close();
      const during = await readinessDuring(closing);
      await closing;
      expect(during?.response.status).toBe(503);
      await t.app.get(DeliveryWorker).idle();
    });
  });
});
