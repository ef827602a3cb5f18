import { INTERNAL_TOKEN_FAILURES_PER_MINUTE } from '../../src/notifications/delivery/publishing/internal-token.guard';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { INTERNAL_EVENTS_PATH } from '../support/test-app-with-kit';

const event = { userId: 1, type: 'RATE_SPIKE', severity: 'INFO', title: 'Rate spike', body: 'USD FRR 0.08%' };

describeEachDatabase('wrong internal tokens on $name', (kind) => {
  const t = appWithKitPerSuite(kind);

  const guess = () =>
    t.http().post(INTERNAL_EVENTS_PATH).set('Authorization', 'Bearer not-the-internal-token-0123456789abcdef').send(event);

  it('answers 401 up to the limit, then 429 with Retry-After, while the right token still publishes', async () => {
    for (let i = 0; i < INTERNAL_TOKEN_FAILURES_PER_MINUTE; i++) await guess().expect(401);
    const limited = await guess().expect(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    await t.publish(event).expect(202);

    t.advance(60_000); // the window is over: a wrong token is a plain 401 again
    await guess().expect(401);
  });
});
