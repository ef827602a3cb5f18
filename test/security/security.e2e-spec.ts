import { Writable } from 'node:stream';
import { LogLevel } from '../../src/service/config/environment-variables';
import { appPerSuite, appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { startTestApp } from '../support/test-app';
import { DELIVERIES, SETTINGS } from '../support/settings-api';

const EVENTS = '/api/v1/internal/notifications/events';
const INTERNAL_TOKEN = 'internal-token-0123456789abcdef0123456789';
const HOOK = 'https://hooks.example.com/funding';
const TABLES = ['notification_preferences', 'webhook_signing_secrets', 'webhook_events', 'webhook_deliveries'];

// nestjs-pino keeps one root logger per process, made by the first app: every app of this file gets this one.
const logLines: string[] = [];
const logDestination = new Writable({
  write(chunk: Buffer, _encoding, done) {
    logLines.push(chunk.toString('utf8'));
    done();
  },
});
const logging = { logDestination, config: { logLevel: LogLevel.error } };

describeEachDatabase('abuse and bad input on $name', (kind) => {
  const t = appPerSuite(kind, { internalApiToken: INTERNAL_TOKEN, rateLimits: false }, logging);
  let user = 0;
  let userId: number;

  beforeEach(() => {
    userId = ++user;
  });

  const rowCounts = async () => {
    const counts: Record<string, number> = {};
    for (const table of TABLES) counts[table] = Number((await t.dataSource.query(`SELECT COUNT(*) AS n FROM ${table}`))[0].n);
    return counts;
  };
  const putRaw = (raw: string, contentType = 'application/json') =>
    t.http().put(SETTINGS).set('Authorization', t.bearer(userId)).set('Content-Type', contentType).send(raw);
  const put = (body: object) => t.http().put(SETTINGS).set('Authorization', t.bearer(userId)).send(body);
  const publishRaw = (raw: string) =>
    t.http().post(EVENTS).set('Authorization', `Bearer ${INTERNAL_TOKEN}`).set('Content-Type', 'application/json').send(raw);
  const event = (overrides: object = {}) => ({
    userId,
    type: 'RATE_SPIKE',
    severity: 'INFO',
    title: 'Spike',
    body: 'USD',
    payload: { rate: 1 },
    ...overrides,
  });

  /** Runs `call`, expects a 400 naming `field`, and checks that no table gained a row. */
  const expectRefusedField = async (
    call: () => PromiseLike<{ status: number; body: { message: string; errors?: unknown[] } }>,
    field: string,
    reason: RegExp,
  ) => {
    const before = await rowCounts();
    const response = await call();
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
    expect(response.body.message).toContain(field);
    expect(response.body.errors).toEqual(expect.arrayContaining([{ field, message: expect.stringMatching(reason) }]));
    expect(await rowCounts()).toEqual(before);
  };

  describe('request bodies', () => {
    it('answers 413 in the error shape for a body over 1 MB, storing nothing', async () => {
      const before = await rowCounts();
      const huge = JSON.stringify({
        type: 'RATE_SPIKE',
        channel: 'WEBHOOK',
        enabled: true,
        webhookUrl: `${HOOK}?${'a'.repeat(1_100_000)}`,
      });
      const response = await putRaw(huge).expect(413);
      expect(response.body).toEqual({
        statusCode: 413,
        error: 'Payload Too Large',
        message: 'Request body is larger than the limit of 1048576 bytes',
      });
      const events = JSON.stringify({ events: Array.from({ length: 1000 }, () => event({ body: 'x'.repeat(2000) })) });
      expect((await publishRaw(events).expect(413)).body.statusCode).toBe(413);
      expect(await rowCounts()).toEqual(before);
    });

    it('answers 400 with a clear message for malformed JSON', async () => {
      const response = await putRaw('{"type": "RATE_SPIKE", "enabled": tru').expect(400);
      expect(response.body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: expect.stringMatching(/^Request body is not valid JSON: /),
      });
      expect((await publishRaw('[{"userId": 1,]').expect(400)).body.message).toMatch(/^Request body is not valid JSON/);
    });

    it.each([
      ['text/plain', 'type=RATE_SPIKE'],
      ['application/x-www-form-urlencoded', 'type=RATE_SPIKE&channel=IN_APP&enabled=true'],
      ['application/xml', '<preference/>'],
    ])('answers 415 for a %s body, storing nothing', async (contentType, raw) => {
      const before = await rowCounts();
      const response = await putRaw(raw, contentType).expect(415);
      expect(response.body).toEqual({ statusCode: 415, error: 'Unsupported Media Type', message: 'Content-Type must be application/json' });
      await t.http().post(EVENTS).set('Authorization', `Bearer ${INTERNAL_TOKEN}`).set('Content-Type', contentType).send(raw).expect(415);
      expect(await rowCounts()).toEqual(before);
    });
  });

  describe('prototype-pollution keys', () => {
    it.each([
      ['__proto__ at the top level', '{"type":"RATE_SPIKE","channel":"IN_APP","enabled":true,"__proto__":{"isAdmin":true}}', '__proto__'],
      [
        'constructor at the top level',
        '{"type":"RATE_SPIKE","channel":"IN_APP","enabled":true,"constructor":{"prototype":{"isAdmin":true}}}',
        'constructor',
      ],
      ['prototype at the top level', '{"type":"RATE_SPIKE","channel":"IN_APP","enabled":true,"prototype":{}}', 'prototype'],
    ])('refuses %s of a settings body', async (_, raw, field) => {
      await expectRefusedField(() => putRaw(raw), field, /reserved name/);
      expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    });

    it.each([
      [
        'payload.__proto__',
        (id: number) =>
          `{"userId":${id},"type":"RATE_SPIKE","severity":"INFO","title":"t","body":"b","payload":{"a":1,"__proto__":{"polluted":1}}}`,
      ],
      [
        'payload.nested[1].constructor',
        (id: number) =>
          `{"userId":${id},"type":"RATE_SPIKE","severity":"INFO","title":"t","body":"b","payload":{"nested":[{},{"constructor":{}}]}}`,
      ],
      [
        'events[1].payload.prototype',
        (id: number) =>
          `{"events":[{"userId":${id},"type":"RATE_SPIKE","severity":"INFO","title":"t","body":"b"},{"userId":${id},"type":"RATE_SPIKE","severity":"INFO","title":"t","body":"b","payload":{"prototype":{}}}]}`,
      ],
    ])('refuses %s of a published event, queueing nothing', async (field, raw) => {
      await put({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: HOOK }).expect(200);
      await expectRefusedField(() => publishRaw(raw(userId)), field, /reserved name/);
    });
  });

  describe('wrong types and sizes', () => {
    it.each([
      ['a string for enabled', { type: 'RATE_SPIKE', channel: 'IN_APP', enabled: 'true' }, 'enabled', /boolean/],
      ['a number for type', { type: 5, channel: 'IN_APP', enabled: true }, 'type', /known event type/],
      [
        'an object for webhookUrl',
        { type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: { href: HOOK } },
        'webhookUrl',
        /string/,
      ],
      ['an array body', [{ type: 'RATE_SPIKE', channel: 'IN_APP', enabled: true }], 'type', /known event type/],
    ])('refuses %s in a preference', async (_, body, field, reason) => {
      await expectRefusedField(() => put(body as object), field, reason);
    });

    it.each([
      ['a string userId', { userId: '42' }, 'userId', /integer/],
      ['a float userId', { userId: 1.5 }, 'userId', /integer/],
      ['a userId beyond the stored range', { userId: 2 ** 31 }, 'userId', /at most 2147483647/],
      ['a number title', { title: 7 }, 'title', /string/],
      ['a title over 200 characters', { title: 't'.repeat(201) }, 'title', /at most 200/],
      ['a body over 10000 characters', { body: 'b'.repeat(10_001) }, 'body', /at most 10000/],
      ['a payload over 16 KiB as JSON', { payload: { blob: 'p'.repeat(16_384) } }, 'payload', /at most 16384 bytes/],
      ['an array payload', { payload: [1, 2] }, 'payload', /JSON object/],
      ['a bad createdAt', { createdAt: 'yesterday' }, 'createdAt', /ISO-8601/],
    ])('refuses %s in a published event', async (_, overrides, field, reason) => {
      await put({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: HOOK }).expect(200);
      await expectRefusedField(() => publishRaw(JSON.stringify(event(overrides))), field, reason);
    });

    it.each([
      ['NUL', `${HOOK}\u0000.evil.test`],
      ['CR LF (header injection)', `${HOOK}\r\nX-Injected: 1`],
      ['a tab', `https://hooks.example.com/a\tb`],
      ['DEL', `${HOOK}\u007f`],
      ['a leading space', ` ${HOOK}`],
    ])('refuses a webhook URL with %s, storing nothing', async (_, webhookUrl) => {
      await expectRefusedField(
        () => put({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl }),
        'webhookUrl',
        /control characters|whitespace/,
      );
    });

    it.each(['abc', '0', '-1', '1.5', '1e3', '0x10', '%2012', '9999999999999999999999'])(
      'answers 400 naming id for the delivery id %s',
      async (id) => {
        const response = await t.http().get(`${DELIVERIES}/${id}`).set('Authorization', t.bearer(userId)).expect(400);
        expect(response.body).toEqual({
          statusCode: 400,
          error: 'Bad Request',
          message: 'id must be a positive integer',
          errors: [{ field: 'id', message: 'must be a positive integer' }],
        });
        await t
          .http()
          .post(`${DELIVERIES}/${id}/redeliver`)
          .set('Authorization', t.bearer(userId))
          .set('Content-Type', 'application/json')
          .expect(400);
      },
    );
  });

  describe('error shape', () => {
    it.each([
      ['an unknown route', 'get', '/api/v1/nope'],
      ['an unsupported method on a known path', 'delete', SETTINGS],
    ] as const)('answers 404 in the error shape for %s', async (_, method, path) => {
      const response = await t.http()[method](path).set('Authorization', t.bearer(userId)).expect(404);
      expect(response.body).toEqual({ statusCode: 404, error: 'Not Found', message: `Cannot ${method.toUpperCase()} ${path}` });
    });

    it('answers 500 without internals when the database fails under a request, and logs the cause', async () => {
      const broken = await startTestApp(kind, { rateLimits: false }, logging);
      try {
        await broken.dataSource.query('ALTER TABLE notification_preferences RENAME TO notification_preferences_gone');
        logLines.length = 0;
        const response = await broken.http().get(SETTINGS).set('Authorization', broken.bearer(1)).expect(500);
        expect(response.body).toEqual({ statusCode: 500, error: 'Internal Server Error', message: 'Internal server error' });
        expect(response.text).not.toMatch(/notification_preferences|SELECT|SQLITE|ER_|at \w+ \(/i);
        const logged = logLines.join('');
        expect(logged).toContain('Unhandled error on GET /api/v1/settings/notifications');
        expect(logged).toContain('notification_preferences');
      } finally {
        await broken.close();
      }
    });
  });
});

describeEachDatabase('cross-site requests on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { rateLimits: false });
  let user = 100;

  // A page on another site can POST to the API with a form or `fetch(…, { mode: 'no-cors' })`, carrying a host's cookies,
  // but only with a "simple" content type (none, text/plain, a form's); application/json needs a CORS preflight first.
  it.each([
    ['no Content-Type', undefined],
    ['text/plain', 'text/plain'],
    ['a form', 'application/x-www-form-urlencoded'],
    ['multipart', 'multipart/form-data; boundary=x'],
  ])('answers 415 to a body-less POST …/redeliver with %s, and redelivers nothing', async (_, contentType) => {
    const userId = ++user;
    await t.enableWebhook(userId, 'RATE_SPIKE', '/csrf');
    await t.publish({ userId, type: 'RATE_SPIKE', severity: 'INFO', title: 't', body: 'b' }).expect(202);
    await t.waitForDelivery({ userId });
    const [delivery] = (await t.http().get(DELIVERIES).set('Authorization', t.bearer(userId)).expect(200)).body.data;
    const before = t.receiver.requests.length;

    const call = t.http().post(`${DELIVERIES}/${delivery.id}/redeliver`).set('Authorization', t.bearer(userId));
    if (contentType) call.set('Content-Type', contentType);
    const response = await call.expect(415);
    expect(response.body).toEqual({
      statusCode: 415,
      error: 'Unsupported Media Type',
      message: 'Content-Type must be application/json, also on a request without a body',
    });
    await t.settle();
    expect(t.receiver.requests).toHaveLength(before);
    expect((await t.http().get(DELIVERIES).set('Authorization', t.bearer(userId)).expect(200)).body.data).toHaveLength(1);

    await t
      .http()
      .post(`${DELIVERIES}/${delivery.id}/redeliver`)
      .set('Authorization', t.bearer(userId))
      .set('Content-Type', 'application/json')
      .expect(202);
    await t.waitForDelivery({ userId, count: 2 });
    expect(t.receiver.requests).toHaveLength(before + 1);
  });
});
