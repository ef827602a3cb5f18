import type { EventType } from '../../src/notifications/catalog/event-catalog';
import { InvalidFieldsException } from '../../src/notifications/common/api/api-errors';
import { WebhookPublisher } from '../../src/notifications/delivery/publishing/webhook-publisher.service';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { SETTINGS } from '../support/settings-api';

const EVENTS = '/api/v1/internal/notifications/events';
const INTERNAL_TOKEN = 'internal-token-0123456789abcdef0123456789';
const TABLES = ['notification_preferences', 'webhook_signing_secrets', 'webhook_events', 'webhook_deliveries'];
const DEPTH_LIMIT = 32;
const TOO_DEEP = /^must not nest objects and arrays more than 32 levels deep$/;
/** JSON arrays nested `depth` levels deep around `leaf`: 5,000 levels overflow class-transformer's recursive copy. */
const nested = (depth: number, leaf = '1') => `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`;
const BUILT_IN_NAMES = [
  'isPrototypeOf',
  'valueOf',
  'toString',
  'toLocaleString',
  'hasOwnProperty',
  'propertyIsEnumerable',
  '__defineGetter__',
  '__lookupSetter__',
];

describeEachDatabase('hostile input on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { rateLimits: false });
  let user = 0;
  let userId: number;

  beforeEach(() => {
    userId = ++user;
    t.receiver.clear();
  });

  const rowCounts = async () => {
    const counts: Record<string, number> = {};
    for (const table of TABLES) counts[table] = Number((await t.dataSource.query(`SELECT COUNT(*) AS n FROM ${table}`))[0].n);
    return counts;
  };
  const sendRaw = (method: 'put' | 'post', path: string, raw: string) =>
    t.http()[method](path).set('Authorization', t.bearer(userId)).set('Content-Type', 'application/json').send(raw);
  const publishRaw = (raw: string) =>
    t.http().post(EVENTS).set('Authorization', `Bearer ${INTERNAL_TOKEN}`).set('Content-Type', 'application/json').send(raw);
  const enable = (type: `${EventType}` = 'RATE_SPIKE', id = userId) => t.enableWebhook(id, type, `/u${id}`);
  /** One event as raw JSON, `extra` spliced in as raw JSON members. */
  const eventJson = (extra = '', id = userId) =>
    `{"userId":${id},"type":"RATE_SPIKE","severity":"INFO","title":"Spike","body":"USD"${extra}}`;

  /** Expects a 400 in the error shape whose `errors` name `field` (and only the fields given), with nothing stored. */
  const expectRefused = async (
    send: () => PromiseLike<{ status: number; body: { message: string; errors?: unknown[] } }>,
    fields: Record<string, RegExp>,
  ) => {
    const before = await rowCounts();
    const response = await send();
    expect({ status: response.status, body: response.body }).toEqual({
      status: 400,
      body: {
        statusCode: 400,
        error: 'Bad Request',
        message: expect.any(String),
        errors: Object.entries(fields).map(([field, message]) => ({ field, message: expect.stringMatching(message) })),
      },
    });
    for (const field of Object.keys(fields)) expect(response.body.message).toContain(field);
    expect(await rowCounts()).toEqual(before);
  };

  describe('deeply nested JSON (a 400 naming the field, never a 500)', () => {
    it.each([
      ['PUT settings, type', 'put', SETTINGS, (deep: string) => `{"type":${deep},"channel":"WEBHOOK","enabled":true}`, 'type'],
      ['PUT settings, channel', 'put', SETTINGS, (deep: string) => `{"type":"RATE_SPIKE","channel":${deep},"enabled":true}`, 'channel'],
      [
        'PUT settings, enabled',
        'put',
        SETTINGS,
        (deep: string) => `{"type":"RATE_SPIKE","channel":"WEBHOOK","enabled":${deep}}`,
        'enabled',
      ],
      [
        'PUT settings, webhookUrl',
        'put',
        SETTINGS,
        (deep: string) => `{"type":"RATE_SPIKE","channel":"WEBHOOK","enabled":true,"webhookUrl":${deep}}`,
        'webhookUrl',
      ],
      ['PUT settings, the body itself an array', 'put', SETTINGS, (deep: string) => deep, '0'],
      ['POST rotate-secret, type', 'post', `${SETTINGS}/webhook/rotate-secret`, (deep: string) => `{"type":${deep}}`, 'type'],
      ['POST webhook/test, type', 'post', `${SETTINGS}/webhook/test`, (deep: string) => `{"type":${deep}}`, 'type'],
    ] as const)('%s', async (_, method, path, body, field) => {
      await enable();
      for (const depth of [5_000, 400_000]) {
        await expectRefused(() => sendRaw(method, path, body(nested(depth))), { [field]: TOO_DEEP });
      }
    });

    it.each([
      ['payload', '5,000 levels', (id: number) => eventJson(`,"payload":{"x":${nested(5_000)}}`, id)],
      ['payload', '400,000 levels (800 KB)', (id: number) => eventJson(`,"payload":{"x":${nested(400_000)}}`, id)],
      ['title', '5,000 levels', (id: number) => eventJson(`,"title":${nested(5_000)}`, id).replace('"title":"Spike",', '')],
      [
        'events[1].payload',
        '5,000 levels',
        (id: number) => `{"events":[${eventJson('', id)},${eventJson(`,"payload":{"a":{"b":${nested(5_000, '{}')}}}`, id)}]}`,
      ],
      ['events[0]', '5,000 levels', () => `{"events":[${nested(5_000)}]}`],
    ])('publish: %s, %s', async (field, _, raw) => {
      await enable();
      await expectRefused(() => publishRaw(raw(userId)), { [field]: TOO_DEEP });
    });

    it('publish: the body itself an array, 5,000 levels, is refused as not an event', async () => {
      await enable();
      const before = await rowCounts();
      const response = await publishRaw(nested(5_000));
      expect({ status: response.status, body: response.body }).toEqual({
        status: 400,
        body: { statusCode: 400, error: 'Bad Request', message: 'The body must be a JSON object' },
      });
      expect(await rowCounts()).toEqual(before);
    });

    it(`delivers a payload nested ${DEPTH_LIMIT} levels deep (the payload itself is level 1) and refuses one level more`, async () => {
      await enable();
      const payload = `{"x":${nested(DEPTH_LIMIT - 1)}}`;
      await t.publish(JSON.parse(eventJson(`,"payload":${payload}`))).expect(202);
      const [request] = await t.waitForDelivery({ userId });
      expect(request.rawBody.toString('utf8')).toContain(`"payload":${payload},"userId":${userId}}`);
      await expectRefused(() => publishRaw(eventJson(`,"payload":{"x":${nested(DEPTH_LIMIT)}}`)), { payload: TOO_DEEP });
    });
  });

  describe('keys named like built-in object methods', () => {
    it.each(BUILT_IN_NAMES)('a settings body with %s is refused naming it, storing nothing', async (key) => {
      await expectRefused(() => sendRaw('put', SETTINGS, `{"type":"RATE_SPIKE","channel":"IN_APP","enabled":true,"${key}":1}`), {
        [key]: /^property \S+ should not exist$/,
      });
      expect((await t.http().get(SETTINGS).set('Authorization', t.bearer(userId)).expect(200)).body).toEqual([]);
    });

    it('refuses them in every settings body and at the top of a published event', async () => {
      await enable();
      await expectRefused(() => sendRaw('post', `${SETTINGS}/webhook/rotate-secret`, '{"type":"RATE_SPIKE","valueOf":{}}'), {
        valueOf: /should not exist/,
      });
      await expectRefused(() => sendRaw('post', `${SETTINGS}/webhook/test`, '{"type":"RATE_SPIKE","toString":"x"}'), {
        toString: /should not exist/,
      });
      await expectRefused(() => publishRaw(eventJson(',"hasOwnProperty":true')), { hasOwnProperty: /should not exist/ });
      await expectRefused(() => publishRaw(`{"events":[${eventJson()},${eventJson(',"isPrototypeOf":1')}]}`), {
        'events[1].isPrototypeOf': /should not exist/,
      });
      expect(t.receiver.requests).toEqual([]);
    });

    it('delivers a payload holding them exactly as published', async () => {
      await enable();
      const payload = `{${BUILT_IN_NAMES.map((key, index) => `"${key}":${JSON.stringify([index, { [key]: key }])}`).join(',')},"plain":{"valueOf":null,"toString":"x"}}`;
      await publishRaw(eventJson(`,"payload":${payload}`)).expect(202);
      await publishRaw(`{"events":[${eventJson(`,"payload":${payload}`)}]}`).expect(202);
      const requests = await t.waitForDelivery({ userId, count: 2 });
      for (const request of requests) expect(request.rawBody.toString('utf8')).toContain(`"payload":${payload},"userId":${userId}}`);
    });
  });

  describe('createdAt and numbers', () => {
    it.each([
      '2026-002',
      '2026-W01-1',
      '20260101T000000Z',
      '2026-01-01T10:00:00+05',
      '2026-01-01T10:00:00',
      '2026-01-01',
      '2026-01-01T10:00:00.Z',
    ])('refuses createdAt %s, which is not an RFC 3339 date-time with an offset', async (createdAt) => {
      await enable();
      await expectRefused(() => publishRaw(eventJson(`,"createdAt":"${createdAt}"`)), { createdAt: /ISO-8601 instant in RFC 3339 form/ });
      await expectRefused(() => publishRaw(`{"events":[${eventJson()},${eventJson(`,"createdAt":"${createdAt}"`)}]}`), {
        'events[1].createdAt': /RFC 3339/,
      });
    });

    it('delivers an RFC 3339 createdAt as that instant in UTC, and refuses a time without an offset', async () => {
      await enable();
      await publishRaw(eventJson(',"createdAt":"2026-01-01T10:00:00.25+05:30"')).expect(202);
      const [request] = await t.waitForDelivery({ userId });
      expect(JSON.parse(request.rawBody.toString('utf8')).createdAt).toBe('2026-01-01T04:30:00.250Z');
      await expectRefused(() => publishRaw(eventJson(',"createdAt":"2026-01-01T10:00:00.25"')), { createdAt: /RFC 3339/ });
    });

    it.each([
      ['payload.amount', (id: number) => eventJson(',"payload":{"amount":1e400}', id)],
      ['payload.rates[2]', (id: number) => eventJson(',"payload":{"rates":[0.1,0.2,-1e400]}', id)],
      ['payload.a.b.c', (id: number) => eventJson(',"payload":{"a":{"b":{"c":1E+999}}}', id)],
      ['events[1].payload.amount', (id: number) => `{"events":[${eventJson('', id)},${eventJson(',"payload":{"amount":1e400}', id)}]}`],
    ])('refuses a number JSON cannot carry, naming %s', async (field, raw) => {
      await enable();
      await expectRefused(() => publishRaw(raw(userId)), { [field]: /^must be a finite number$/ });
    });
  });

  describe('limits of one event', () => {
    it('refuses a body of 10,000 control characters naming body, and delivers whole the largest event within every limit', async () => {
      await enable();
      await expectRefused(() => publishRaw(JSON.stringify({ ...JSON.parse(eventJson()), body: '\u0001'.repeat(10_000) })), {
        body: /^must be at most 40000 bytes as JSON$/,
      });

      const largestUser = 2_147_483_647;
      await enable('API_KEY_PERMISSIONS_CHANGED', largestUser);
      const title = '\u0001\uFE0F'.repeat(200); // 200 characters as the limit counts them, 1,802 bytes as JSON: the most a title takes
      const body = `${'\u0002'.repeat(6_666)}ab`; // 39,998 bytes and its quotes
      const blob = 'p'.repeat(16_384 - '{"blob":""}'.length);
      const event = {
        userId: largestUser,
        type: 'API_KEY_PERMISSIONS_CHANGED',
        severity: 'WARNING',
        title,
        body,
        payload: { blob },
        createdAt: '2026-11-22T12:00:00.000Z',
      };
      expect(Buffer.byteLength(JSON.stringify(event.title))).toBe(1_802);
      expect(Buffer.byteLength(JSON.stringify(event.body))).toBe(40_000);
      expect(Buffer.byteLength(JSON.stringify(event.payload))).toBe(16_384);
      await t.publish(event).expect(202);
      const [request] = await t.waitForDelivery({ userId: largestUser });
      const { userId: _, payload, ...rest } = event;
      expect(request.rawBody.toString('utf8')).toBe(JSON.stringify({ ...rest, payload, userId: largestUser }));
    });
  });

  describe('WebhookPublisher.publishMany, for host apps', () => {
    const expectInvalid = async (events: unknown[], field: string, message: RegExp) => {
      const publishing = t.app.get(WebhookPublisher).publishMany(events as never);
      await expect(publishing).rejects.toBeInstanceOf(InvalidFieldsException);
      await expect(publishing).rejects.toMatchObject({ fieldErrors: [{ field, message: expect.stringMatching(message) }] });
    };

    it('applies the same checks, and delivers the payload as given', async () => {
      await enable();
      const event = (overrides: object = {}) => ({ ...JSON.parse(eventJson()), ...overrides });
      await expectInvalid([event(), event({ payload: JSON.parse(`{"x":${nested(5_000)}}`) })], 'events[1].payload', TOO_DEEP);
      await expectInvalid([event({ payload: { amount: Number.POSITIVE_INFINITY } })], 'events[0].payload.amount', /finite/);
      await expectInvalid([event({ createdAt: new Date('not a date') })], 'events[0].createdAt', /RFC 3339/);
      await expectInvalid([event({ createdAt: '2026-002' })], 'events[0].createdAt', /RFC 3339/);
      await expectInvalid([event({ valueOf: 1 })], 'events[0].valueOf', /should not exist/);

      const payload = { valueOf: 1, toString: 'x', nested: { isPrototypeOf: [true] } };
      await t.app.get(WebhookPublisher).publishMany([event({ payload, createdAt: new Date('2026-11-22T12:00:00Z') })]);
      const [request] = await t.waitForDelivery({ userId });
      expect(request.rawBody.toString('utf8')).toContain(`"createdAt":"2026-11-22T12:00:00.000Z","payload":${JSON.stringify(payload)},`);
    });
  });
});
