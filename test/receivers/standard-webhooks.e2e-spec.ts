import { Webhook } from 'standardwebhooks';
import { buildSignatureVectors, type StandardWebhooksVector } from '../../src/service/scripts/signature-vectors';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';

/** The official library's verdict; it reads the clock itself (tolerance 5 min), so the clock is set to the vector's now. */
function officialVerdict(vector: StandardWebhooksVector): 'accept' | 'reject' {
  vi.setSystemTime(vector.now * 1000);
  try {
    new Webhook(vector.secret).verify(Buffer.from(vector.body.base64, 'base64'), vector.headers, { jsonParse: false });
    return 'accept';
  } catch {
    return 'reject';
  } finally {
    vi.useRealTimers();
  }
}

describe('Standard Webhooks conformance vectors', () => {
  const { vectors } = buildSignatureVectors().standardWebhooks;

  it.each(vectors.map((vector) => [vector.name, vector] as const))('the official standardwebhooks library agrees with %s', (_, vector) => {
    vi.useFakeTimers({ toFake: ['Date'] });
    expect(officialVerdict(vector)).toBe(vector.expected);
  });
});

describeEachDatabase('Standard Webhooks headers of real deliveries on $name', (kind) => {
  const t = appWithKitPerSuite(kind);

  it('verify with the official library, next to an unchanged X-Service-Signature', async () => {
    const userId = 1;
    const secret = await t.enableWebhook(userId, 'LOAN_EXECUTED', '/standard');
    const published = await t
      .publish({ userId, type: 'LOAN_EXECUTED', severity: 'INFO', title: 'Prêt exécuté €', body: 'USD 1500', payload: { amount: 1500 } })
      .expect(202);
    const [request] = await t.waitForDelivery({ userId });
    const headers = request.headers as Record<string, string>;
    expect(headers['webhook-id']).toBe(published.body.eventIds[0]);
    expect(headers['webhook-timestamp']).toBe(headers['x-service-timestamp']);
    expect(headers['x-service-signature']).toMatch(/^v1=[0-9a-f]{64}$/);

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(t.clock.now());
    try {
      expect(new Webhook(secret).verify(request.rawBody, headers)).toEqual(JSON.parse(request.rawBody.toString('utf8')));
      // The signature covers the id: the same request replayed under another webhook-id fails.
      expect(() => new Webhook(secret).verify(request.rawBody, { ...headers, 'webhook-id': 'a-replayed-id' })).toThrow();
    } finally {
      vi.useRealTimers();
    }
  });
});
