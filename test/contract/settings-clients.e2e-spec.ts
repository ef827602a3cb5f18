import type { AddressInfo } from 'node:net';
import createClient from 'openapi-fetch';
import type { paths } from '@funding/notification-webhooks/openapi-types';
import { NotificationsMetrics } from '../../src';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { loadOpenApiDocument } from '../support/openapi-arbitraries';
import { parsePrometheusText } from '../support/prometheus-text';
import { allDeliveries, settingsClient } from '../support/typed-client/settings-client';
import { SETTINGS } from '../support/settings-api';

/*
 * Clients generated from the committed document, against the running service on a real database and a loopback
 * HTTPS receiver: the repository's own typed client (test/typed-client) pages through a delivery log, and a second,
 * independent one, openapi-fetch over src/generated/openapi-types.ts, calls every settings operation the document lists.
 */
const document = loadOpenApiDocument();
const SETTINGS_OPERATIONS = Object.entries(document.paths)
  .filter(([path]) => path.startsWith(SETTINGS))
  .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
  .sort();

describeEachDatabase('generated clients against the service on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { autoDisableAfterFailures: 1 });
  let origin: string;
  let user = 500;

  beforeAll(async () => {
    await t.app.listen(0, '127.0.0.1');
    origin = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  });
  beforeEach(() => t.receiver.clear());

  const publish = async (userId: number, type: string, count: number): Promise<string[]> => {
    const events = Array.from({ length: count }, (_, i) => ({ userId, type, severity: 'INFO', title: `Event ${i}`, body: 'Body' }));
    const { body } = await t.publish({ events }).expect(202);
    await t.settle();
    return (body as { eventIds: string[] }).eventIds;
  };

  it('the typed client pages through a log of 45 deliveries, 20 at a time, passing each nextCursor back as cursor', async () => {
    const userId = ++user;
    await t.enableWebhook(userId, 'RATE_SPIKE', '/paged');
    const published = await publish(userId, 'RATE_SPIKE', 45);
    const api = settingsClient(origin, t.bearer(userId).replace(/^Bearer /, ''));

    const first = await api.deliveries({ limit: 20 });
    expect(first).toMatchObject({ ok: true, data: { nextCursor: expect.any(String) } });
    const seen = [];
    for await (const delivery of allDeliveries(api, { limit: 20 })) seen.push(delivery);

    expect(seen).toHaveLength(45);
    const ids = seen.map((delivery) => delivery.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a)); // newest first, no page repeats or skips one
    expect(new Set(seen.map((delivery) => delivery.eventId))).toEqual(new Set(published));
  });

  it('keeps accepting the numeric cursors clients sent before, and names the field when a cursor is not one it gave', async () => {
    const userId = ++user;
    await t.enableWebhook(userId, 'RATE_SPIKE', '/numeric');
    await publish(userId, 'RATE_SPIKE', 3);
    const list = (query: string) => t.http().get(`${SETTINGS}/webhook-deliveries?${query}`).set('Authorization', t.bearer(userId));
    const { body: page } = await list('limit=2').expect(200);
    const { body: rest } = await list(`limit=2&cursor=${Number(page.nextCursor)}`).expect(200);
    expect(rest).toMatchObject({ data: [expect.anything()], nextCursor: null });

    for (const cursor of ['abc', '0', '-1', '1.5', '1e3']) {
      const { body } = await list(`cursor=${cursor}`).expect(400);
      expect(body.errors).toEqual([{ field: 'cursor', message: 'must be the nextCursor of a previous page' }]);
    }
  });

  it('lists only the deliveries of the type and status asked for, newest first', async () => {
    const userId = ++user;
    await t.enableWebhook(userId, 'RATE_SPIKE', '/spikes');
    await t.enableWebhook(userId, 'LOAN_EXECUTED', '/loans');
    t.receiver.respondWith({ status: 500 }, { path: '/loans' });
    const [spike] = await publish(userId, 'RATE_SPIKE', 1);
    const [loan] = await publish(userId, 'LOAN_EXECUTED', 1);
    await t.waitForDelivery({ count: 2 });
    await t.settle();
    const list = async (query: string) =>
      (await t.http().get(`${SETTINGS}/webhook-deliveries?${query}`).set('Authorization', t.bearer(userId)).expect(200)).body.data.map(
        (delivery: { eventId: string; status: string }) => [delivery.eventId, delivery.status],
      );

    expect(await list('')).toEqual([
      [loan, 'PENDING'],
      [spike, 'DELIVERED'],
    ]);
    expect(await list('type=RATE_SPIKE')).toEqual([[spike, 'DELIVERED']]);
    expect(await list('status=PENDING')).toEqual([[loan, 'PENDING']]);
    expect(await list('type=LOAN_EXECUTED&status=DELIVERED')).toEqual([]);

    // The user turns the failing webhook off: its retry ends CANCELLED, and nothing is left for later tests to send.
    await t
      .http()
      .put(SETTINGS)
      .set('Authorization', t.bearer(userId))
      .send({ type: 'LOAN_EXECUTED', channel: 'WEBHOOK', enabled: false })
      .expect(200);
    t.advance(60_000);
    await t.runScheduler();
    expect(await list('status=CANCELLED')).toEqual([[loan, 'CANCELLED']]);
    expect(await list('status=PENDING')).toEqual([]);
  });

  it('keeps a failed test send out of retries, the delivery log and auto-disable (which is on, after 1 failure)', async () => {
    const userId = ++user;
    await t.enableWebhook(userId, 'IDLE_CASH', '/failing');
    t.receiver.respondWith({ status: 500, body: 'broken' });
    const api = settingsClient(origin, t.bearer(userId).replace(/^Bearer /, ''));

    const tested = await api.sendTest({ type: 'IDLE_CASH' });
    expect(tested).toMatchObject({ ok: true, data: { success: false, outcome: 'http_error', statusCode: 500, responseExcerpt: 'broken' } });
    t.advance(5 * 60 * 60_000);
    await t.runScheduler();
    await t.settle();

    expect(t.receiver.requests).toHaveLength(1);
    expect(await api.deliveries()).toMatchObject({ ok: true, data: { data: [], nextCursor: null } });
    const effective = await api.effective();
    expect(effective.ok && effective.data.find((row) => row.type === 'IDLE_CASH' && row.channel === 'WEBHOOK')).toMatchObject({
      enabled: true,
    });
    t.receiver.respondWith({ status: 204 });
  });

  it('openapi-fetch, over the committed types, calls every settings operation of the document', async () => {
    const userId = ++user;
    const client = createClient<paths>({ baseUrl: origin, headers: { authorization: t.bearer(userId) } });
    const called = new Set<string>();
    client.use({ onRequest: ({ request, schemaPath }) => void called.add(`${request.method} ${schemaPath}`) });
    const metric = async (series: string) =>
      parsePrometheusText(await t.app.get(NotificationsMetrics).registry.metrics()).get(series) ?? Number.NaN;

    const saved = await client.PUT('/api/v1/settings/notifications', {
      body: { type: 'LOAN_EXECUTED', channel: 'WEBHOOK', enabled: true, webhookUrl: t.receiver.url('/screen') },
    });
    expect(saved.data?.webhookSecret).toMatch(/^whsec_/);

    const listed = await client.GET('/api/v1/settings/notifications');
    expect(listed.data).toEqual([expect.objectContaining({ type: 'LOAN_EXECUTED', channel: 'WEBHOOK', hasWebhookSecret: true })]);

    // The document's WebhookEventType is exactly the set of types the effective view offers WEBHOOK for.
    const effective = await client.GET('/api/v1/settings/notifications/effective');
    const withWebhook = effective.data!.filter((row) => row.channel === 'WEBHOOK').map((row) => row.type);
    expect(withWebhook.sort()).toEqual([...document.components.schemas.WebhookEventType.enum!].sort());
    expect(effective.data).toContainEqual(expect.objectContaining({ type: 'LOAN_EXECUTED', channel: 'WEBHOOK', enabled: true }));

    // A test send: answered at once, then found neither in the delivery log nor among delivery attempts.
    const attemptsBefore = await metric('webhook_attempts_total{outcome="success"}');
    const testSendsBefore = await metric('webhook_test_sends_total{outcome="success"}');
    const tested = await client.POST('/api/v1/settings/notifications/webhook/test', { body: { type: 'LOAN_EXECUTED' } });
    expect(tested.data).toMatchObject({ success: true, outcome: 'success', statusCode: 204 });
    expect(t.receiver.requests).toHaveLength(1);
    const afterTest = await client.GET('/api/v1/settings/notifications/webhook-deliveries', { params: { query: {} } });
    expect(afterTest.data).toEqual({ data: [], nextCursor: null });
    expect(await metric('webhook_test_sends_total{outcome="success"}')).toBe(testSendsBefore + 1);
    expect(await metric('webhook_attempts_total{outcome="success"}')).toBe(attemptsBefore);

    await publish(userId, 'LOAN_EXECUTED', 2);
    const page = await client.GET('/api/v1/settings/notifications/webhook-deliveries', {
      params: { query: { type: 'LOAN_EXECUTED', limit: 1 } },
    });
    expect(page.data?.data).toHaveLength(1);
    const older = await client.GET('/api/v1/settings/notifications/webhook-deliveries', {
      params: { query: { limit: 1, cursor: page.data!.nextCursor ?? undefined } },
    });
    expect(older.data).toMatchObject({ data: [{ status: 'DELIVERED' }], nextCursor: null });

    const id = page.data!.data[0].id;
    const detail = await client.GET('/api/v1/settings/notifications/webhook-deliveries/{id}', { params: { path: { id } } });
    expect(detail.data).toMatchObject({ id, status: 'DELIVERED', attempts: [{ attemptNumber: 1, outcome: 'success' }] });

    const redelivered = await client.POST('/api/v1/settings/notifications/webhook-deliveries/{id}/redeliver', {
      params: { path: { id } },
      headers: { 'Content-Type': 'application/json' }, // openapi-fetch sets it only with a body
    });
    expect(redelivered.response.status).toBe(202);
    expect(redelivered.data).toMatchObject({ eventId: detail.data!.eventId, status: 'PENDING' });

    const health = await client.GET('/api/v1/settings/notifications/webhook-health');
    expect(health.data).toEqual([
      expect.objectContaining({
        type: 'LOAN_EXECUTED',
        state: 'HEALTHY',
        failedAttemptsInRow: 0,
        lastAttempt: expect.objectContaining({ statusCode: 204 }),
      }),
    ]);

    // Nothing ended FAILED in the last hour: nothing to recover.
    const since = new Date(t.clock.now() - 3_600_000).toISOString();
    const recovered = await client.POST('/api/v1/settings/notifications/webhook-deliveries/recover', { body: { since } });
    expect(recovered.response.status).toBe(202);
    expect(recovered.data).toEqual({ queued: 0, more: false });

    const rotated = await client.POST('/api/v1/settings/notifications/webhook/rotate-secret', { body: { type: 'LOAN_EXECUTED' } });
    expect(rotated.data?.webhookSecret).toMatch(/^whsec_/);
    expect(rotated.data?.webhookSecret).not.toBe(saved.data?.webhookSecret);

    const switched = await client.PUT('/api/v1/settings/notifications', {
      body: {
        type: 'LOAN_EXECUTED',
        channel: 'WEBHOOK',
        enabled: true,
        webhookUrl: t.receiver.url('/screen'),
        signatureSchemes: ['hmac', 'ed25519'],
      },
    });
    expect(switched.data?.signingPublicKey).toMatch(/^whpk_/);
    const rotatedKey = await client.POST('/api/v1/settings/notifications/webhook/rotate-signing-key', {
      body: { type: 'LOAN_EXECUTED', overlapHours: 1 },
    });
    expect(rotatedKey.data).toMatchObject({
      signatureSchemes: ['hmac', 'ed25519'],
      previousSigningPublicKey: switched.data?.signingPublicKey,
    });

    // The generated type refuses a type that cannot use WEBHOOK; so does the service, naming the field.
    const refused = await client.POST('/api/v1/settings/notifications/webhook/rotate-secret', {
      // @ts-expect-error HIGH_UTILIZATION is not a WebhookEventType
      body: { type: 'HIGH_UTILIZATION' },
    });
    expect(refused.response.status).toBe(400);
    expect(refused.error?.errors).toEqual([{ field: 'type', message: expect.stringContaining('can be delivered to a webhook') }]);
    const refusedTest = await client.POST('/api/v1/settings/notifications/webhook/test', {
      // @ts-expect-error WITHDRAWAL_DETECTED is not a WebhookEventType
      body: { type: 'WITHDRAWAL_DETECTED' },
    });
    expect(refusedTest.error?.errors).toEqual([{ field: 'type', message: expect.stringContaining('can be delivered to a webhook') }]);

    expect([...called].sort()).toEqual(SETTINGS_OPERATIONS);
  });
});
