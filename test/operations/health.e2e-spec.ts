import { DataSource } from 'typeorm';
import { describeEachDatabase } from '../support/each-database';
import { startTestApp, type TestApp } from '../support/test-app';
import { startTestAppWithKit } from '../support/test-app-with-kit';

describeEachDatabase('health probes on $name', (kind) => {
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

  it('says only "database unavailable" when the database refuses, never the driver error', async () => {
    t = await startTestApp(kind);
    const dataSource = t.app.get(DataSource);
    // What a MySQL driver says to a refused connection: internal addresses and the database user.
    const driverError = "Access denied for user 'notifications'@'10.20.30.40' (using password: YES)";
    const query = dataSource.query.bind(dataSource);
    dataSource.query = ((sql: string, ...rest: unknown[]) =>
      /^SELECT 1/.test(sql) ? Promise.reject(new Error(driverError)) : query(sql, ...(rest as []))) as typeof dataSource.query;
    const ready = await t.http().get('/health/ready').expect(503);
    expect(ready.body.error.database).toEqual({ status: 'down', message: 'database unavailable' });
    expect(JSON.stringify(ready.body)).not.toMatch(/notifications'|10\.20\.30\.40|Access denied/);
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

  it('stays unready while the delivery workers drain an attempt in flight', async () => {
    const kit = await startTestAppWithKit(kind, { delivery: { timeoutMs: 1500 } });
    t = kit;
    await kit.enableWebhook(1, 'RATE_SPIKE', '/slow');
    kit.receiver.respondWith('hang');
    await kit.publish({ userId: 1, type: 'RATE_SPIKE', severity: 'INFO', title: 'Spike', body: 'USD' }).expect(202);
    await kit.receiver.waitForDelivery({ userId: 1 });

    const closing = t.app.close();
    const during = await readinessDuring(closing);
    await closing;
    expect(during?.response.status).toBe(503);
    await kit.settle();
  });
});
