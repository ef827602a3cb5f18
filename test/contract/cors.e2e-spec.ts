import { loadAppConfig } from '../../src/service/config/load-app-config';
import { appPerSuite } from '../support/each-database';
import type { TestApp } from '../support/test-app';
import { TEST_DATABASE_KINDS } from '../support/test-databases';
import { SETTINGS } from '../support/settings-api';

const ALLOWED = 'https://app.example.com';
const preflight = (t: TestApp, origin: string) =>
  t
    .http()
    .options(SETTINGS)
    .set('Origin', origin)
    .set('Access-Control-Request-Method', 'PUT')
    .set('Access-Control-Request-Headers', 'authorization,content-type');

describe('CORS', () => {
  const kind = TEST_DATABASE_KINDS[0]; // CORS is HTTP set-up only; the database does not matter

  describe('with CORS_ORIGINS set', () => {
    const t = appPerSuite(kind, {}, { config: { corsOrigins: [ALLOWED, 'http://localhost:5173'] } });

    it('answers a preflight from an allowed origin, allowing Authorization and Content-Type', async () => {
      const response = await preflight(t, ALLOWED).expect(204);
      expect(response.headers['access-control-allow-origin']).toBe(ALLOWED);
      expect(response.headers['access-control-allow-methods']).toBe('GET,PUT,POST');
      expect(response.headers['access-control-allow-headers']).toBe('Authorization,Content-Type');
      expect(response.headers['access-control-max-age']).toBe('600');
      expect(response.headers.vary).toMatch(/Origin/);
    });

    it('adds the headers to the actual request, exposing Retry-After', async () => {
      const response = await t.http().get(SETTINGS).set('Origin', 'http://localhost:5173').set('Authorization', t.bearer(1)).expect(200);
      expect(response.headers['access-control-allow-origin']).toBe('http://localhost:5173');
      expect(response.headers['access-control-expose-headers']).toBe('Retry-After');
    });

    it.each(['https://evil.example.com', 'https://app.example.com.evil.test', 'http://app.example.com', 'null'])(
      'gives a refused origin (%s) no Access-Control-Allow-Origin',
      async (origin) => {
        const response = await preflight(t, origin);
        expect(response.headers['access-control-allow-origin']).toBeUndefined();
        const actual = await t.http().get(SETTINGS).set('Origin', origin).set('Authorization', t.bearer(1)).expect(200);
        expect(actual.headers['access-control-allow-origin']).toBeUndefined();
      },
    );
  });

  describe('by default', () => {
    const t = appPerSuite(kind);

    it('is off: a preflight gets no CORS headers', async () => {
      const response = await preflight(t, ALLOWED).expect(404);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      expect(response.headers['access-control-allow-methods']).toBeUndefined();
    });
  });

  describe('CORS_ORIGINS', () => {
    const env = { NODE_ENV: 'test', JWT_SECRET: 'j'.repeat(32), SECRETS_ENCRYPTION_KEY: `k1:${Buffer.alloc(32, 1).toString('base64')}` };

    it('is read as a comma-separated list of exact origins, empty by default', () => {
      expect(loadAppConfig({ ...env, CORS_ORIGINS: ' https://app.example.com , http://localhost:5173' }).corsOrigins).toEqual([
        'https://app.example.com',
        'http://localhost:5173',
      ]);
      expect(loadAppConfig(env).corsOrigins).toEqual([]);
    });

    it.each(['*', 'https://app.example.com/', 'app.example.com', 'ftp://app.example.com', 'https://app.example.com/path'])(
      'refuses %s with a message naming the variable',
      (value) => {
        expect(() => loadAppConfig({ ...env, CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS must list origins/);
      },
    );
  });
});
