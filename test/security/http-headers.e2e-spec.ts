import { appPerSuite, describeEachDatabase } from '../support/each-database';
import { SETTINGS } from '../support/settings-api';
import { TEST_DATABASE_KINDS } from '../support/test-databases';

const HOOK = 'https://hooks.example.com/funding';
const CSP =
  /^default-src 'none'; script-src 'self'; style-src 'self'( 'unsafe-inline')?; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'$/;

describe('API docs (Swagger UI)', () => {
  const sqlite = TEST_DATABASE_KINDS[0];

  describe('when on (the default outside production)', () => {
    const t = appPerSuite(sqlite, {}, { config: { apiDocs: true } });

    it('serves the page with a strict Content-Security-Policy, and the document', async () => {
      const page = await t.http().get('/api/docs').redirects(1).expect(200);
      expect(page.headers['content-security-policy']).toMatch(CSP);
      expect(page.headers['x-content-type-options']).toBe('nosniff');
      const html = page.text;
      expect(html).not.toMatch(/<script>[^<]/); // no inline script: the policy allows none
      await t.http().get('/api/docs-json').expect(200);
    });
  });

  describe('when off (the default in production)', () => {
    const t = appPerSuite(sqlite, {}, { config: { apiDocs: false } });

    it('answers 404 for the page and the document', async () => {
      await t.http().get('/api/docs').expect(404);
      await t.http().get('/api/docs-json').expect(404);
    });
  });
});

describeEachDatabase('security headers on $name', (kind) => {
  const t = appPerSuite(kind, { rateLimits: false });

  it('says nosniff on every answer, API, errors and probes', async () => {
    for (const call of [
      t.http().get(SETTINGS).set('Authorization', t.bearer(1)),
      t.http().get(SETTINGS),
      t.http().get('/health/live'),
      t.http().get('/no-such-route'),
    ]) {
      expect((await call).headers['x-content-type-options']).toBe('nosniff');
    }
  });

  it('says Cache-Control: no-store on the answers that carry a signing secret', async () => {
    const enabled = await t
      .http()
      .put(SETTINGS)
      .set('Authorization', t.bearer(2))
      .send({ type: 'RATE_SPIKE', channel: 'WEBHOOK', enabled: true, webhookUrl: HOOK })
      .expect(200);
    expect(enabled.body.webhookSecret).toEqual(expect.any(String));
    expect(enabled.headers['cache-control']).toBe('no-store');
    const rotated = await t
      .http()
      .post(`${SETTINGS}/webhook/rotate-secret`)
      .set('Authorization', t.bearer(2))
      .send({ type: 'RATE_SPIKE' })
      .expect(200);
    expect(rotated.body.webhookSecret).toEqual(expect.any(String));
    expect(rotated.headers['cache-control']).toBe('no-store');
  });
});
