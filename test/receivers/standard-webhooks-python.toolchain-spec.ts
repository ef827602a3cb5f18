import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { buildSignatureVectors } from '../../src/service/scripts/signature-vectors';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';

// `npm run test:examples`: a Standard Webhooks verifier written from the spec with Python's standard library (the
// official Python package is on PyPI, which CI cannot reach) agrees with our vectors and with a real delivery, for the
// HMAC `v1` and, with Ed25519 written out from RFC 8032, the asymmetric `v1a`.
const PYTHON_VERIFIER = join(__dirname, '..', 'support', 'standard-webhooks-verifier.py');

interface VerifierCase {
  readonly secret?: string;
  readonly public_key?: string;
  readonly headers: Record<string, string>;
  readonly body_base64: string;
  readonly now: number;
  readonly tolerance: number;
}

/** The Python verifier's verdicts, one per case. */
function pythonVerdicts(cases: readonly VerifierCase[]): string[] {
  return JSON.parse(execFileSync('python3', [PYTHON_VERIFIER], { input: JSON.stringify(cases) }).toString('utf8')) as string[];
}

describe('Standard Webhooks: a verifier written from the spec (Python, standard library)', () => {
  it('agrees with every conformance vector', () => {
    const { vectors } = buildSignatureVectors().standardWebhooks;
    const cases = vectors.map((vector) => ({
      secret: vector.secret,
      headers: vector.headers,
      body_base64: vector.body.base64,
      now: vector.now,
      tolerance: vector.toleranceSeconds,
    }));
    expect(pythonVerdicts(cases)).toEqual(vectors.map((vector) => vector.expected));
  });

  it('agrees with every v1a (Ed25519) conformance vector, with the public key alone', () => {
    const { vectors } = buildSignatureVectors().standardWebhooksEd25519;
    const cases = vectors.map((vector) => ({
      public_key: vector.publicKey,
      headers: vector.headers,
      body_base64: vector.body.base64,
      now: vector.now,
      tolerance: vector.toleranceSeconds,
    }));
    expect(pythonVerdicts(cases)).toEqual(vectors.map((vector) => vector.expected));
  });

  describeEachDatabase('on a real delivery on $name', (kind) => {
    const t = appWithKitPerSuite(kind);

    it('accepts it, and rejects it replayed under another webhook-id', async () => {
      const userId = 1;
      const secret = await t.enableWebhook(userId, 'LOAN_EXECUTED', '/standard');
      await t
        .publish({ userId, type: 'LOAN_EXECUTED', severity: 'INFO', title: 'Prêt exécuté €', body: 'USD 1500', payload: {} })
        .expect(202);
      const [request] = await t.waitForDelivery({ userId });
      const headers = request.headers as Record<string, string>;
      const delivered = {
        secret,
        headers,
        body_base64: request.rawBody.toString('base64'),
        now: Math.floor(t.clock.now() / 1000),
        tolerance: 300,
      };
      const replayed = { ...delivered, headers: { ...headers, 'webhook-id': 'a-replayed-id' } };
      expect(pythonVerdicts([delivered, replayed])).toEqual(['accept', 'reject']);
    });

    it('accepts a v1a delivery with the public key the settings API shows, and rejects it replayed under another webhook-id', async () => {
      const userId = 2;
      const enabled = await t
        .http()
        .put('/api/v1/settings/notifications')
        .set('Authorization', t.bearer(userId))
        .send({
          type: 'LOAN_EXECUTED',
          channel: 'WEBHOOK',
          enabled: true,
          webhookUrl: t.receiver.url('/v1a'),
          signatureSchemes: ['ed25519'],
        })
        .expect(200);
      await t
        .publish({ userId, type: 'LOAN_EXECUTED', severity: 'INFO', title: 'Prêt exécuté €', body: 'USD 1500', payload: {} })
        .expect(202);
      const [request] = await t.waitForDelivery({ userId });
      const headers = request.headers as Record<string, string>;
      const delivered = {
        public_key: enabled.body.signingPublicKey as string,
        headers,
        body_base64: request.rawBody.toString('base64'),
        now: Math.floor(t.clock.now() / 1000),
        tolerance: 300,
      };
      const replayed = { ...delivered, headers: { ...headers, 'webhook-id': 'a-replayed-id' } };
      expect(pythonVerdicts([delivered, replayed])).toEqual(['accept', 'reject']);
    });
  });
});
