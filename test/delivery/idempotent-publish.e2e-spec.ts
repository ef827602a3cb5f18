import type { AddressInfo } from 'node:net';
import { notificationsTestOptions, startTestReceiver, TestClock, type TestReceiver } from '@funding/notification-webhooks/testing';
import { InvalidFieldsException } from '../../src/notifications/common/api/api-errors';
import { IdempotencyKeyReusedException } from '../../src/notifications/delivery/publishing/idempotency/idempotency-conflict.exception';
import { WebhookIdempotencyKey } from '../../src/notifications/delivery/publishing/idempotency/webhook-idempotency-key.entity';
import { WebhookPublisher } from '../../src/notifications/delivery/publishing/webhook-publisher.service';
import { WebhookEvent } from '../../src/notifications/delivery/entities/webhook-event.entity';
import { RetentionService } from '../../src/notifications/retention/retention.service';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { persistentDatabase } from '../support/persistent-database';
import { startTestAppOn, type TestApp } from '../support/test-app';
import { INTERNAL_API_TOKEN, INTERNAL_EVENTS_PATH } from '../support/test-app-with-kit';
import { publisherClient } from '../support/typed-client/publisher-client';

const HOUR = 60 * 60 * 1000;
const KEY_HEADER = 'Idempotency-Key';

describeEachDatabase('idempotent publish on $name', (kind) => {
  const t = appWithKitPerSuite(kind);
  let user = 0;
  let userId: number;
  let keyCount = 0;
  let key: string;

  beforeAll(async () => {
    await t.app.listen(0, '127.0.0.1');
  });
  beforeEach(async () => {
    userId = ++user;
    key = `order-${++keyCount}:publish`;
    t.receiver.clear();
    await t.enableWebhook(userId, 'LOAN_EXECUTED', `/u${userId}`);
  });

  const event = (title = 'Loan executed', payload: Record<string, unknown> = { amount: 1000, currency: 'USD' }) => ({
    userId,
    type: 'LOAN_EXECUTED',
    severity: 'INFO',
    title,
    body: '1000 USD',
    payload,
  });
  const post = (body: object, idempotencyKey = key) => t.publish(body).set(KEY_HEADER, idempotencyKey);
  const storedEvents = () => t.dataSource.getRepository(WebhookEvent).countBy({ userId });
  const storedKeys = (k = key) => t.dataSource.getRepository(WebhookIdempotencyKey).countBy({ key: k });

  it('answers a retry with the first call its event ids and queued count, storing and sending nothing new', async () => {
    const first = await post({ events: [event('a'), event('b')] }).expect(202);
    expect(first.body).toEqual({ eventIds: [expect.any(String), expect.any(String)], queuedDeliveries: 2 });
    const hooks = await t.waitForDelivery({ userId, count: 2 });
    expect(hooks.map((hook) => hook.eventId).sort()).toEqual([...first.body.eventIds].sort());

    // The same events, the payload's keys in another order: the same content.
    const retry = await post({ events: [event('a', { currency: 'USD', amount: 1000 }), event('b')] }).expect(202);
    expect(retry.body).toEqual({ ...first.body, replayed: true });
    await t.runScheduler();
    await t.settle();
    expect(t.receiver.requests).toHaveLength(2);
    expect(await storedEvents()).toBe(2);
    expect(await storedKeys()).toBe(1);
  });

  it("answers a retry that carries another traceparent from the key: the trace is not content, and the first call's stays", async () => {
    const traceparent = (spanId: string) => `00-4bf92f3577b34da6a3ce929d0e0e4736-${spanId}-01`;
    const first = await post(event()).set('traceparent', traceparent('00f067aa0ba902b7')).expect(202);
    const [hook] = await t.waitForDelivery({ userId });

    const retry = await post(event()).set('traceparent', traceparent('b7ad6b7169203331')).expect(202);
    expect(retry.body).toEqual({ ...first.body, replayed: true });
    await t.runScheduler();
    await t.settle();
    expect(t.receiver.requests).toHaveLength(1);
    const stored = await t.dataSource.getRepository(WebhookEvent).findOneByOrFail({ id: first.body.eventIds[0] });
    expect(stored.traceparent).toBe(traceparent('00f067aa0ba902b7'));
    expect(hook.headers.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
  });

  it('answers 409 to the same key with other events, naming the header, and stores nothing', async () => {
    const first = await post(event('a')).expect(202);
    const conflict = await post(event('a changed')).expect(409);
    expect(conflict.body).toEqual({
      statusCode: 409,
      error: 'Conflict',
      message: expect.stringMatching(/^Idempotency-Key was already used at .+ for different events: a retry must send exactly the same/),
    });
    await t.waitForDelivery({ userId });
    expect(await storedEvents()).toBe(1);
    // A single event and a batch of that one event are the same content.
    expect((await post({ events: [event('a')] }).expect(202)).body).toEqual({ ...first.body, replayed: true });
  });

  it('publishes one set of events when calls with one key arrive at once', async () => {
    const answers = await Promise.all(Array.from({ length: 4 }, () => post(event('at once'))));
    expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202, 202]);
    const ids = new Set(answers.map((answer) => answer.body.eventIds[0]));
    expect(ids.size).toBe(1);
    expect(answers.filter((answer) => !answer.body.replayed)).toHaveLength(1);
    await t.waitForDelivery({ userId });
    await t.runScheduler();
    await t.settle();
    expect(t.receiver.requests).toHaveLength(1);
    expect(await storedEvents()).toBe(1);
  });

  it('keeps keys per producer: the host and the internal token never share one', async () => {
    const viaToken = await post(event('token')).expect(202);
    const viaHost = await t.publisher.publish(event('host') as never, { idempotencyKey: key });
    expect(viaHost.eventIds[0]).not.toBe(viaToken.body.eventIds[0]);
    expect(viaHost.replayed).toBeUndefined();
    expect(await t.publisher.publish(event('host') as never, { idempotencyKey: key })).toEqual({ ...viaHost, replayed: true });
    await t.waitForDelivery({ userId, count: 2 });
    expect(await storedKeys()).toBe(2);
  });

  it('forgets a key after its window: a new publish then, and the retention job deletes it', async () => {
    const first = await post(event('day 1')).expect(202);
    t.advance(24 * HOUR - 1);
    expect((await post(event('day 1')).expect(202)).body).toEqual({ ...first.body, replayed: true });
    t.advance(2);
    const later = await post(event('day 2')).expect(202); // other events: the key is free again
    expect(later.body.eventIds[0]).not.toBe(first.body.eventIds[0]);
    await t.waitForDelivery({ userId, count: 2 });
    expect(await storedKeys()).toBe(1);

    t.advance(24 * HOUR - 1);
    await t.app.get(RetentionService).purge();
    expect(await storedKeys()).toBe(1); // still within its window
    t.advance(2);
    const { idempotencyKeys } = await t.app.get(RetentionService).purge();
    expect(idempotencyKeys).toBeGreaterThanOrEqual(1);
    expect(await storedKeys()).toBe(0);
  });

  it("commits the key with the host's transaction, and a rollback leaves none", async () => {
    const failed = t.dataSource.transaction(async (manager) => {
      await t.publisher.publish(event('rolled back') as never, { manager, idempotencyKey: key });
      throw new Error('the host changed its mind');
    });
    await expect(failed).rejects.toThrow('the host changed its mind');
    expect(await storedKeys()).toBe(0);

    const committed = await t.dataSource.transaction((manager) =>
      t.publisher.publish(event('committed') as never, { manager, idempotencyKey: key }),
    );
    expect(await t.publisher.publish(event('committed') as never, { idempotencyKey: key })).toEqual({ ...committed, replayed: true });
    await expect(t.publisher.publish(event('other') as never, { idempotencyKey: key })).rejects.toThrow(IdempotencyKeyReusedException);
    const [hook] = await t.waitForDelivery({ userId });
    expect(hook.json()).toMatchObject({ title: 'committed' });
    expect(await storedEvents()).toBe(1);
  });

  it('the typed client keeps one key across its retries: a second publishSafely with that key is answered from it', async () => {
    const client = publisherClient(`http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`, INTERNAL_API_TOKEN);
    const body = { events: [event('typed') as never] };
    const first = await client.publishSafely(body, { key });
    expect(first).toMatchObject({ ok: true, status: 202, data: { queuedDeliveries: 1 } });
    const again = await client.publishSafely(body, { key });
    expect(again).toEqual({ ...first, data: { ...(first.ok ? first.data : {}), replayed: true } });
    expect(await client.publish({ events: [event('other') as never] }, key)).toMatchObject({ ok: false, status: 409 });
    await t.waitForDelivery({ userId });
    expect(await storedEvents()).toBe(1);
  });

  it.each([
    ['too long', 'k'.repeat(256)],
    ['with a space', 'two words'],
    ['not ASCII', 'clé'],
  ])('refuses a key %s, naming the header or the option', async (_, bad) => {
    const response = await post(event(), bad).expect(400);
    expect(response.body.errors).toEqual([{ field: 'Idempotency-Key', message: expect.stringContaining('1 to 255 visible ASCII') }]);
    const error = await t.publisher.publish(event() as never, { idempotencyKey: bad }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(InvalidFieldsException);
    expect((error as InvalidFieldsException).fieldErrors.map((e) => e.field)).toEqual(['idempotencyKey']);
    expect(await storedEvents()).toBe(0);
  });
});

describeEachDatabase('idempotency keys across instances on $name', (kind) => {
  const TOKEN = 'internal-token-instances-0123456789abcdef';
  const OTHER_TOKEN = 'internal-token-other-producer-0123456789ab';
  let receiver: TestReceiver;
  let instances: TestApp[];

  beforeAll(async () => {
    receiver = await startTestReceiver();
    const clock = new TestClock();
    const database = await persistentDatabase(kind);
    const shared = { ...database, drop: async () => undefined };
    instances = [];
    for (const [index, token] of [TOKEN, TOKEN, OTHER_TOKEN].entries())
      instances.push(
        await startTestAppOn(index === 0 ? database : shared, {
          ...notificationsTestOptions({ receiver, clock }),
          internalApiToken: token,
        }),
      );
  });
  afterAll(async () => {
    for (const instance of [...instances].reverse()) await instance.close();
    await receiver.close();
  });

  const post = (instance: TestApp, token: string, title: string) =>
    instance
      .http()
      .post(INTERNAL_EVENTS_PATH)
      .set('Authorization', `Bearer ${token}`)
      .set(KEY_HEADER, 'shared-key')
      .send({ userId: 1, type: 'LOAN_EXECUTED', severity: 'INFO', title, body: 'b' });

  it('answers a retry on another instance from the key, and keeps another token its own keys', async () => {
    const [a, b, other] = instances;
    const first = await post(a, TOKEN, 'first').expect(202);
    expect((await post(b, TOKEN, 'first').expect(202)).body).toEqual({ ...first.body, replayed: true });
    await post(b, TOKEN, 'changed').expect(409);
    const otherProducer = await post(other, OTHER_TOKEN, 'changed').expect(202);
    expect(otherProducer.body.replayed).toBeUndefined();
    expect(otherProducer.body.eventIds[0]).not.toBe(first.body.eventIds[0]);
    expect(
      await a.app
        .get(WebhookPublisher)
        .publish(
          { userId: 1, type: 'LOAN_EXECUTED' as never, severity: 'INFO' as never, title: 'x', body: 'b' },
          { idempotencyKey: 'shared-key' },
        ),
    ).not.toHaveProperty('replayed');
    expect(Number((await a.dataSource.query('SELECT COUNT(*) AS n FROM webhook_idempotency_keys'))[0].n)).toBe(3);
  });
});
