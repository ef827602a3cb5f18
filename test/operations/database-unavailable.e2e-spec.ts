import { DataSource } from 'typeorm';
import { describeEachDatabase } from '../support/each-database';
import { startTestApp, type TestApp } from '../support/test-app';

const INTERNAL_TOKEN = 'internal-token-0123456789abcdef0123456789';
const event = { userId: 7, type: 'RATE_SPIKE', severity: 'INFO', title: 'Rate spike', body: 'FRR rose', payload: {} };

describeEachDatabase('a database that is gone, on $name', (kind) => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  it('answers 503 with Retry-After in the one error shape on every endpoint, not 500', async () => {
    t = await startTestApp(kind, { internalApiToken: INTERNAL_TOKEN, rateLimits: false });
    await t.app.get(DataSource).destroy();

    const publish = await t
      .http()
      .post('/api/v1/internal/notifications/events')
      .set('Authorization', `Bearer ${INTERNAL_TOKEN}`)
      .send(event);
    const settings = await t.http().get('/api/v1/settings/notifications').set('Authorization', t.bearer(7));
    for (const response of [publish, settings]) {
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('5');
      expect(response.body).toEqual({
        statusCode: 503,
        error: 'Service Unavailable',
        message: 'The database is unavailable; retry after 5 s',
      });
    }
  });

  it('still answers 400 for bad input before touching the database', async () => {
    t = await startTestApp(kind, { internalApiToken: INTERNAL_TOKEN, rateLimits: false });
    await t.app.get(DataSource).destroy();
    const response = await t
      .http()
      .post('/api/v1/internal/notifications/events')
      .set('Authorization', `Bearer ${INTERNAL_TOKEN}`)
      .send({ ...event, userId: -1 });
    expect(response.status).toBe(400);
    expect(response.headers['retry-after']).toBeUndefined();
  });
});
