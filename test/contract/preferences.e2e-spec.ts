import { JwtService } from '@nestjs/jwt';
import { NotificationChannel } from '../../src/notifications/catalog/event-catalog';
import { signUserToken } from '../../src/notifications/auth/jwt-user-resolver';
import { appPerSuite, describeEachDatabase } from '../support/each-database';
import { startTestApp, TEST_JWT_SECRET } from '../support/test-app';
import { SETTINGS } from '../support/settings-api';

const HOOK = 'https://hooks.example.com/funding';

describeEachDatabase('notification preferences API on $name', (kind) => {
  const t = appPerSuite(kind);
  let user = 0;
  let userId: number;

  beforeEach(() => {
    userId = ++user;
  });

  const put = (body: object, id = userId) => t.http().put(SETTINGS).set('Authorization', t.bearer(id)).send(body);
  const get = (path = SETTINGS, id = userId) => t.http().get(path).set('Authorization', t.bearer(id));
  const enableWebhook = (type = 'RATE_SPIKE', webhookUrl = HOOK) => put({ type, channel: 'WEBHOOK', enabled: true, webhookUrl });

  it('reveals the signing secret once, on the first enable, and never again', async () => {
    const first = await enableWebhook().expect(200);
    expect(first.body).toEqual({
      type: 'RATE_SPIKE',
      channel: 'WEBHOOK',
      enabled: true,
      webhookUrl: HOOK,
      hasWebhookSecret: true,
      orderedDelivery: false,
      signatureSchemes: ['hmac'],
      webhookSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      updatedAt: expect.any(String),
    });
    const secret: string = first.body.webhookSecret;

    const second = await enableWebhook().expect(200);
    expect(second.body).not.toHaveProperty('webhookSecret');
    expect(second.body.hasWebhookSecret).toBe(true);

    const list = await get().expect(200);
    expect(list.body).toEqual([expect.objectContaining({ type: 'RATE_SPIKE', channel: 'WEBHOOK', hasWebhookSecret: true })]);
    const effective = await get(`${SETTINGS}/effective`).expect(200);
    const row = effective.body.find((r: { type: string; channel: string }) => r.type === 'RATE_SPIKE' && r.channel === 'WEBHOOK');
    expect(row).toEqual({
      type: 'RATE_SPIKE',
      group: 'RATES',
      channel: 'WEBHOOK',
      enabled: true,
      source: 'USER',
      webhookUrl: HOOK,
      hasWebhookSecret: true,
      orderedDelivery: false,
      signatureSchemes: ['hmac'],
    });
    for (const body of [second.text, list.text, effective.text]) expect(body).not.toContain(secret.slice(6));
  });

  it('stores the secret encrypted: no column of any row holds it in clear text', async () => {
    const secret: string = (await enableWebhook('LOAN_EXECUTED').expect(200)).body.webhookSecret;
    const rows = await t.dataSource.query('SELECT * FROM webhook_signing_secrets');
    const dump = JSON.stringify([rows, await t.dataSource.query('SELECT * FROM notification_preferences')]);
    expect(rows.length).toBeGreaterThan(0);
    expect(dump).not.toContain(secret.slice(6));
    expect(dump).not.toContain(Buffer.from(secret).toString('base64'));
  });

  it('keeps URL and secret when disabled, and reuses the secret when re-enabled', async () => {
    await enableWebhook().expect(200);
    const disabled = await put({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: false }).expect(200);
    expect(disabled.body).toMatchObject({ enabled: false, webhookUrl: HOOK, hasWebhookSecret: true });
    const reenabled = await enableWebhook('RATE_SPIKE', 'https://other.example.com/hook').expect(200);
    expect(reenabled.body).toMatchObject({ enabled: true, webhookUrl: 'https://other.example.com/hook', hasWebhookSecret: true });
    expect(reenabled.body).not.toHaveProperty('webhookSecret');
  });

  it.each([
    ['a lone surrogate in the path', 'https://hooks.example.com/\ud800', 'https://hooks.example.com/%EF%BF%BD'],
    ['an upper-case host and the default port', 'https://HOOKS.Example.com:443/Funding?a=1', 'https://hooks.example.com/Funding?a=1'],
    ['no path', 'https://hooks.example.com', 'https://hooks.example.com/'],
  ])('stores and answers the URL as validated, normalized: %s', async (_, sent, stored) => {
    expect((await enableWebhook('RATE_SPIKE', sent).expect(200)).body.webhookUrl).toBe(stored);
    const [listed] = (await get().expect(200)).body;
    expect(listed.webhookUrl).toBe(stored);
  });

  it('does not create a secret for a webhook saved disabled', async () => {
    const saved = await put({ type: 'IDLE_CASH', channel: 'WEBHOOK', enabled: false, webhookUrl: HOOK }).expect(200);
    expect(saved.body).toMatchObject({ enabled: false, hasWebhookSecret: false, webhookUrl: HOOK });
    const enabled = await enableWebhook('IDLE_CASH').expect(200);
    expect(enabled.body.webhookSecret).toMatch(/^whsec_/);
  });

  it('gives each event type its own secret', async () => {
    const a = (await enableWebhook('RATE_SPIKE').expect(200)).body.webhookSecret;
    const b = (await enableWebhook('RATE_DROP').expect(200)).body.webhookSecret;
    expect(a).toMatch(/^whsec_/);
    expect(b).toMatch(/^whsec_/);
    expect(a).not.toBe(b);
  });

  it('reveals exactly one secret when first enables race', async () => {
    const responses = await Promise.all(Array.from({ length: 6 }, () => enableWebhook('STALE_OFFER')));
    expect(responses.map((r) => r.status)).toEqual(Array(6).fill(200));
    expect(responses.filter((r) => r.body.webhookSecret)).toHaveLength(1);
    expect((await get().expect(200)).body).toHaveLength(1);
  });

  it('stores IN_APP and EMAIL preferences without URL or secret fields', async () => {
    const saved = await put({ type: 'DAILY_DIGEST', channel: 'EMAIL', enabled: false }).expect(200);
    expect(saved.body).toEqual({ type: 'DAILY_DIGEST', channel: 'EMAIL', enabled: false, updatedAt: expect.any(String) });
  });

  it('merges defaults and overrides in the effective view', async () => {
    await put({ type: 'DAILY_DIGEST', channel: 'EMAIL', enabled: false }).expect(200);
    await put({ type: 'RATE_SPIKE', channel: 'IN_APP', enabled: false }).expect(200);
    const { body } = await get(`${SETTINGS}/effective`).expect(200);
    const find = (type: string, channel: string) =>
      body.find((r: { type: string; channel: string }) => r.type === type && r.channel === channel);

    expect(body).toHaveLength(25 * 3 + 4 * 2);
    expect(find('DAILY_DIGEST', 'EMAIL')).toMatchObject({ enabled: false, source: 'USER' });
    expect(find('WEEKLY_DIGEST', 'EMAIL')).toMatchObject({ enabled: true, source: 'DEFAULT' });
    expect(find('WEEKLY_DIGEST', 'IN_APP')).toMatchObject({ enabled: false, source: 'DEFAULT' });
    expect(find('RATE_SPIKE', 'IN_APP')).toMatchObject({ enabled: false, source: 'USER' });
    expect(find('RATE_DROP', 'IN_APP')).toMatchObject({ enabled: true, source: 'DEFAULT' });
    expect(find('RATE_DROP', 'WEBHOOK')).toEqual({
      type: 'RATE_DROP',
      group: 'RATES',
      channel: 'WEBHOOK',
      enabled: false,
      source: 'DEFAULT',
      webhookUrl: null,
      hasWebhookSecret: false,
      orderedDelivery: false,
      signatureSchemes: ['hmac'],
    });
    expect(find('HIGH_UTILIZATION', 'WEBHOOK')).toBeUndefined();
    expect(find('HIGH_UTILIZATION', 'IN_APP')).toMatchObject({ enabled: true, group: 'SERVICE_MANAGED' });
    expect(body.filter((r: { channel: string; enabled: boolean }) => r.channel === NotificationChannel.WEBHOOK && r.enabled)).toEqual([]);
  });

  it("never shows or changes another user's preferences", async () => {
    await enableWebhook('RATE_SPIKE').expect(200);
    const other = userId + 1000;
    expect((await get(SETTINGS, other).expect(200)).body).toEqual([]);
    const theirs = await put(
      { type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: 'https://b.example.com/x' },
      other,
    ).expect(200);
    expect(theirs.body.webhookSecret).toMatch(/^whsec_/);
    const mine = await get().expect(200);
    expect(mine.body).toEqual([expect.objectContaining({ webhookUrl: HOOK })]);
  });

  describe('validation', () => {
    it.each([
      ['unknown type', { type: 'NOPE', channel: 'WEBHOOK', enabled: true, webhookUrl: HOOK }, 'type', /known event type/],
      [
        'managed type on WEBHOOK',
        { type: 'HIGH_UTILIZATION', channel: 'WEBHOOK', enabled: true, webhookUrl: HOOK },
        'channel',
        /not offered for HIGH_UTILIZATION/,
      ],
      ['unknown channel', { type: 'RATE_SPIKE', channel: 'SMS', enabled: true }, 'channel', /must be one of IN_APP, EMAIL, WEBHOOK/],
      ['non-boolean enabled', { type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: 'yes', webhookUrl: HOOK }, 'enabled', /boolean/],
      ['missing enabled', { type: 'RATE_SPIKE', channel: 'IN_APP' }, 'enabled', /boolean/],
      [
        'missing webhookUrl when enabling',
        { type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true },
        'webhookUrl',
        /required when enabling/,
      ],
      [
        'webhookUrl on another channel',
        { type: 'RATE_SPIKE', channel: 'EMAIL', enabled: true, webhookUrl: HOOK },
        'webhookUrl',
        /only accepted with channel WEBHOOK/,
      ],
      ['unknown extra field', { type: 'RATE_SPIKE', channel: 'IN_APP', enabled: true, secret: 'x' }, 'secret', /should not exist/],
      [
        'http URL',
        { type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: 'http://hooks.example.com/x' },
        'webhookUrl',
        /https/,
      ],
      [
        'URL over 2048 characters',
        { type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: `https://a.example.com/${'a'.repeat(2030)}` },
        'webhookUrl',
        /2048/,
      ],
      [
        'localhost URL',
        { type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: 'https://localhost/x' },
        'webhookUrl',
        /loopback|localhost/,
      ],
      [
        'private IP URL',
        { type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: 'https://10.1.2.3/x' },
        'webhookUrl',
        /private/,
      ],
      [
        'metadata IP in decimal',
        { type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: 'https://2852039166/latest' },
        'webhookUrl',
        /link-local/,
      ],
      [
        'credentials in URL',
        { type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: 'https://u:p@hooks.example.com/' },
        'webhookUrl',
        /credentials/,
      ],
      ['not a URL', { type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: 'hooks' }, 'webhookUrl', /valid absolute URL/],
    ])('answers 400 naming the field for %s', async (_, body, field, reason) => {
      const response = await put(body).expect(400);
      expect(response.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(response.body.message).toContain(field);
      expect(response.body.errors).toEqual(expect.arrayContaining([{ field, message: expect.stringMatching(reason) }]));
      expect((await get().expect(200)).body).toEqual([]);
    });

    it('refuses a host name that resolves to a private address, without naming its range', async () => {
      const guarded = await startTestApp(kind, { resolver: async () => ['93.184.216.34', '192.168.1.20'] });
      try {
        const response = await guarded
          .http()
          .put(SETTINGS)
          .set('Authorization', guarded.bearer(1))
          .send({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: 'https://rebind.example.com/x' })
          .expect(400);
        expect(response.body.errors[0]).toEqual({ field: 'webhookUrl', message: 'must not resolve to an address that is not public' });
      } finally {
        await guarded.close();
      }
    });

    it('answers 400 for malformed JSON', async () => {
      const response = await t
        .http()
        .put(SETTINGS)
        .set('Authorization', t.bearer(userId))
        .set('Content-Type', 'application/json')
        .send('{"type": "RATE_SPIKE",')
        .expect(400);
      expect(response.body).toEqual({ statusCode: 400, error: 'Bad Request', message: expect.stringMatching(/JSON/) });
    });
  });

  describe('authentication', () => {
    const unsigned = (claims: object) =>
      `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.`;

    it.each([
      ['no Authorization header', undefined],
      ['a token signed with another key', `Bearer ${signUserToken('another-secret-0123456789abcdef0123456789', 1)}`],
      ['an expired token', `Bearer ${signUserToken(TEST_JWT_SECRET, 1, -10)}`],
      ['alg none', `Bearer ${unsigned({ sub: '1' })}`],
      ['a non-numeric sub', `Bearer ${new JwtService({ secret: TEST_JWT_SECRET }).sign({ sub: 'alice' })}`],
      ['a Basic scheme', 'Basic dXNlcjpwYXNz'],
    ])('answers 401 with %s', async (_, authorization) => {
      const call = t.http().get(SETTINGS);
      if (authorization) call.set('Authorization', authorization);
      const response = await call.expect(401);
      expect(response.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'A valid bearer token is required' });
    });
  });
});
