import { JwtService, type JwtSignOptions } from '@nestjs/jwt';
import { signUserToken } from '../../src/notifications/auth/jwt-user-resolver';
import { appPerSuite, appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { startTestApp, TEST_JWT_SECRET } from '../support/test-app';
import { INTERNAL_API_TOKEN, INTERNAL_EVENTS_PATH } from '../support/test-app-with-kit';
import { DELIVERIES, SETTINGS } from '../support/settings-api';

const UNAUTHORIZED = { statusCode: 401, error: 'Unauthorized', message: 'A valid bearer token is required' };

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);
const signed = (claims: object, secret = TEST_JWT_SECRET, algorithm: 'HS256' | 'HS512' = 'HS256', options: JwtSignOptions = {}) =>
  new JwtService({ secret }).sign(claims, { algorithm, expiresIn: 60, ...options });

describeEachDatabase('authentication edge cases on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { rateLimits: false });

  describe('user tokens on the settings API', () => {
    it.each([
      ['alg none', `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ sub: '1', exp: now() + 60 })}.`],
      [
        'alg none with a copied signature',
        `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ sub: '1' })}.${signed({ sub: '1' }).split('.')[2]}`,
      ],
      ['HS512 with the right key', signed({ sub: '1' }, TEST_JWT_SECRET, 'HS512')],
      ['a wrong key', signUserToken('another-secret-0123456789abcdef0123456789', 1)],
      ['an expired token', signUserToken(TEST_JWT_SECRET, 1, -10)],
      ['a token not valid yet (nbf)', signed({ sub: '1', nbf: now() + 3600 })],
      ['a token without exp (it would never expire)', new JwtService({ secret: TEST_JWT_SECRET }).sign({ sub: '1' })],
      ['a token that expires in the year 9999 (lifetime over 7 days)', signUserToken(TEST_JWT_SECRET, 1, 253402300799 - now())],
      ['a token with a crit header', signed({ sub: '1' }, TEST_JWT_SECRET, 'HS256', { header: { alg: 'HS256', crit: ['exp'] } })],
      [
        'a tampered payload',
        (() => {
          const [h, , s] = signUserToken(TEST_JWT_SECRET, 1).split('.');
          return `${h}.${base64url({ sub: '2' })}.${s}`;
        })(),
      ],
      ['a non-numeric sub', signed({ sub: 'alice' })],
      ['a negative sub', signed({ sub: '-1' })],
      ['a zero sub', signed({ sub: '0' })],
      ['a float sub', signed({ sub: 1.5 })],
      ['a float string sub', signed({ sub: '1.5' })],
      ['a sub beyond the stored id range', signed({ sub: String(2 ** 31) })],
      ['a huge sub', signed({ sub: '123456789012345678901234567890' })],
      ['a sub with leading zeros', signed({ sub: '007' })],
      ['no sub', signed({ user: 1 })],
      ['garbage', 'not-a-token'],
    ])('answers 401 for %s', async (_, token) => {
      const response = await t.http().get(SETTINGS).set('Authorization', `Bearer ${token}`).expect(401);
      expect(response.body).toEqual(UNAUTHORIZED);
    });

    it.each([
      ['no Authorization header', undefined],
      ['a token without the Bearer scheme', signUserToken(TEST_JWT_SECRET, 1)],
      ['a Basic scheme', 'Basic dXNlcjpwYXNz'],
      ['an empty Bearer', 'Bearer '],
    ])('answers 401 for %s', async (_, authorization) => {
      const call = t.http().get(SETTINGS);
      if (authorization !== undefined) call.set('Authorization', authorization);
      expect((await call.expect(401)).body).toEqual(UNAUTHORIZED);
    });

    it('accepts a valid token, with the scheme in any case, and a numeric sub', async () => {
      await t
        .http()
        .get(SETTINGS)
        .set('Authorization', `bearer ${signUserToken(TEST_JWT_SECRET, 5)}`)
        .expect(200);
      await t
        .http()
        .get(SETTINGS)
        .set('Authorization', `Bearer ${signed({ sub: 2147483647 })}`)
        .expect(200);
    });
  });

  describe('user tokens bound to an issuer and an audience', () => {
    const bound = appPerSuite(kind, { rateLimits: false, jwtIssuer: 'https://funding.example.com', jwtAudience: 'notification-settings' });
    const claims = { sub: '1', iss: 'https://funding.example.com', aud: 'notification-settings' };

    it('accepts a token with both', async () => {
      await bound
        .http()
        .get(SETTINGS)
        .set('Authorization', `Bearer ${signed(claims)}`)
        .expect(200);
      await bound.http().get(SETTINGS).set('Authorization', bound.bearer(1)).expect(200);
    });

    it.each([
      ['no iss (another kind of token signed with the same key)', { sub: '1', aud: claims.aud }],
      ['another iss', { ...claims, iss: 'https://mail.example.com' }],
      ['no aud', { sub: '1', iss: claims.iss }],
      ['another aud (a password-reset link)', { ...claims, aud: 'password-reset' }],
    ])('answers 401 for %s', async (_, payload) => {
      const response = await bound
        .http()
        .get(SETTINGS)
        .set('Authorization', `Bearer ${signed(payload)}`)
        .expect(401);
      expect(response.body).toEqual(UNAUTHORIZED);
    });
  });

  describe("another user's deliveries", () => {
    it('answers 404, exactly as for an id that does not exist, on detail and redeliver', async () => {
      const owner = 101;
      await t.enableWebhook(owner, 'RATE_SPIKE', '/owner');
      await t.publish({ userId: owner, type: 'RATE_SPIKE', severity: 'INFO', title: 't', body: 'b' }).expect(202);
      await t.waitForDelivery({ userId: owner });
      const [delivery] = (await t.http().get(`${DELIVERIES}`).set('Authorization', t.bearer(owner)).expect(200)).body.data;
      await t.http().get(`${DELIVERIES}/${delivery.id}`).set('Authorization', t.bearer(owner)).expect(200);

      const intruder = t.bearer(202);
      const theirs = await t.http().get(`${DELIVERIES}/${delivery.id}`).set('Authorization', intruder).expect(404);
      const missing = await t
        .http()
        .get(`${DELIVERIES}/${delivery.id + 1_000_000}`)
        .set('Authorization', intruder)
        .expect(404);
      expect(theirs.body).toEqual({ statusCode: 404, error: 'Not Found', message: `Delivery ${delivery.id} not found` });
      expect(Object.keys(theirs.body)).toEqual(Object.keys(missing.body));
      await t
        .http()
        .post(`${DELIVERIES}/${delivery.id}/redeliver`)
        .set('Authorization', intruder)
        .set('Content-Type', 'application/json')
        .expect(404);
      expect((await t.http().get(`${DELIVERIES}`).set('Authorization', intruder).expect(200)).body.data).toEqual([]);
      expect(t.receiver.requests).toHaveLength(1);
    });
  });

  describe('internal token', () => {
    const event = { userId: 1, type: 'RATE_SPIKE', severity: 'INFO', title: 't', body: 'b' };
    it.each([
      ['no token', undefined],
      ['a wrong token of the same length', `Bearer ${'x'.repeat(INTERNAL_API_TOKEN.length)}`],
      ['the token with one more character', `Bearer ${INTERNAL_API_TOKEN}x`],
      ['a prefix of the token', `Bearer ${INTERNAL_API_TOKEN.slice(0, -1)}`],
      ['the token without the Bearer scheme', INTERNAL_API_TOKEN],
      ['a user JWT', 'user'],
    ])('answers 401 for %s', async (_, authorization) => {
      const call = t.http().post(INTERNAL_EVENTS_PATH);
      if (authorization) call.set('Authorization', authorization === 'user' ? t.bearer(1) : authorization);
      const response = await call.send(event).expect(401);
      expect(response.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'A valid internal API token is required' });
    });

    it('answers 404 while no internal token is configured', async () => {
      const closed = await startTestApp(kind, { rateLimits: false });
      try {
        const response = await closed
          .http()
          .post(INTERNAL_EVENTS_PATH)
          .set('Authorization', `Bearer ${INTERNAL_API_TOKEN}`)
          .send(event)
          .expect(404);
        expect(response.body).toMatchObject({ statusCode: 404, error: 'Not Found' });
      } finally {
        await closed.close();
      }
    });
  });
});
