import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { verifyWebhookSignature } from '../notifications/delivery/webhook-signature';
import { withStagedLibrary } from './library-package';
import { SIGNATURE_VECTORS_FILE, type SignatureVector, type SignatureVectorsDocument, signatureVectorsJson } from './signature-vectors';

const ROOT = join(__dirname, '..', '..');
const committed = readFileSync(join(ROOT, SIGNATURE_VECTORS_FILE), 'utf8');
// The verdicts are checked on the committed file, the one the package ships.
const vectors = (JSON.parse(committed) as SignatureVectorsDocument).vectors;
const rawBody = (vector: SignatureVector) => Buffer.from(vector.body.base64, 'base64');

// The contract's rules (spec section 5.2) written out on their own, without the service's code.
function contractVerifier(vector: SignatureVector): boolean {
  const timestamp = vector.headers['X-Service-Timestamp'];
  const match = /^v1=([0-9a-fA-F]{64})$/.exec(vector.headers['X-Service-Signature'] ?? '');
  if (!timestamp || !/^\d+$/.test(timestamp) || !match) return false;
  if (Math.abs(vector.now - Number(timestamp)) > vector.toleranceSeconds) return false;
  const expected = createHmac('sha256', Buffer.from(vector.secret, 'utf8')).update(`${timestamp}.`).update(rawBody(vector)).digest();
  return timingSafeEqual(expected, Buffer.from(match[1], 'hex'));
}

describe('signature conformance vectors', () => {
  it(`${SIGNATURE_VECTORS_FILE} is what the service signer generates (run npm run vectors after changing the signer)`, () => {
    expect(committed).toBe(signatureVectorsJson());
  });

  it('has at least 12 uniquely named cases, both verdicts, and a utf8 field that matches the bytes', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(12);
    expect(new Set(vectors.map((v) => v.name)).size).toBe(vectors.length);
    expect(new Set(vectors.map((v) => v.expected))).toEqual(new Set(['accept', 'reject']));
    for (const vector of vectors) {
      if (vector.body.utf8 !== null) expect(Buffer.from(vector.body.utf8, 'utf8').equals(rawBody(vector))).toBe(true);
    }
  });

  it.each(vectors.map((v) => [v.name, v] as const))('%s: verifyWebhookSignature and the contract agree with the verdict', (_, vector) => {
    const accept = vector.expected === 'accept';
    const verdict = verifyWebhookSignature({
      secret: vector.secret,
      timestamp: vector.headers['X-Service-Timestamp'],
      signature: vector.headers['X-Service-Signature'],
      rawBody: rawBody(vector),
      toleranceSeconds: vector.toleranceSeconds,
      now: vector.now * 1000,
    });
    expect(verdict).toBe(accept);
    expect(contractVerifier(vector)).toBe(accept);
  });

  it('catches the common mistakes: a verifier over re-serialized JSON or a decoded body fails some vectors', () => {
    const reserializing = (vector: SignatureVector) => {
      const text = rawBody(vector).toString('utf8');
      let reserialized = text;
      try {
        reserialized = JSON.stringify(JSON.parse(text));
      } catch {
        // not JSON: left as text
      }
      return contractVerifier({ ...vector, body: { base64: Buffer.from(reserialized, 'utf8').toString('base64'), utf8: reserialized } });
    };
    const failed = vectors.filter((v) => reserializing(v) !== (v.expected === 'accept')).map((v) => v.name);
    expect(failed).toEqual(expect.arrayContaining(['whitespace-reserialized', 'valid-non-utf8-bytes']));
  });

  it('ships in the package as @funding/notification-webhooks/signature-vectors.json', () => {
    withStagedLibrary((stage, packed) => {
      // Node resolves a package's own name through its "exports" (self-reference), as an installed package would.
      const resolved = createRequire(join(stage, 'package.json')).resolve('@funding/notification-webhooks/signature-vectors.json');
      expect(resolved).toBe(join(stage, SIGNATURE_VECTORS_FILE));
      expect(readFileSync(resolved, 'utf8')).toBe(committed);
      expect(packed).toContain(SIGNATURE_VECTORS_FILE);
    });
  });
});
