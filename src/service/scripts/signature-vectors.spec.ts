import { createHmac, createPublicKey, timingSafeEqual, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { verifyWebhookPublicKeySignature } from '../../notifications/delivery/wire/standard-webhooks-signature';
import { verifyWebhookSignature } from '../../notifications/delivery/wire/webhook-signature';
import { withStagedLibrary } from './library-package';
import {
  type Ed25519Vector,
  SIGNATURE_VECTORS_FILE,
  type SignatureVector,
  type SignatureVectorsDocument,
  signatureVectorsJson,
} from './signature-vectors';

const ROOT = join(__dirname, '..', '..', '..');
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

describe('v1a (Ed25519) conformance vectors', () => {
  const edVectors = (JSON.parse(committed) as SignatureVectorsDocument).standardWebhooksEd25519.vectors;

  // Standard Webhooks' asymmetric scheme written out on its own: the public key as a JWK, node:crypto's verify.
  function specVerifier(vector: Ed25519Vector): boolean {
    const { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signatures } = vector.headers;
    if (!id || !timestamp || !signatures || !/^\d+$/.test(timestamp)) return false;
    if (Math.abs(vector.now - Number(timestamp)) > vector.toleranceSeconds) return false;
    const x = Buffer.from(vector.publicKey.replace(/^whpk_/, ''), 'base64').toString('base64url');
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), Buffer.from(vector.body.base64, 'base64')]);
    return signatures.split(' ').some((entry) => {
      const [version, signature] = entry.split(',');
      const bytes = Buffer.from(signature ?? '', 'base64');
      return version === 'v1a' && bytes.length === 64 && verify(null, signed, key, bytes);
    });
  }

  it('has uniquely named cases of both verdicts, all with one public key in the whpk_ format', () => {
    expect(edVectors.length).toBeGreaterThanOrEqual(12);
    expect(new Set(edVectors.map((v) => v.name)).size).toBe(edVectors.length);
    expect(new Set(edVectors.map((v) => v.expected))).toEqual(new Set(['accept', 'reject']));
    expect(new Set(edVectors.map((v) => v.publicKey)).size).toBe(1);
    expect(edVectors[0].publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
  });

  it.each(edVectors.map((v) => [v.name, v] as const))(
    '%s: verifyWebhookPublicKeySignature and the spec agree with the verdict',
    (_, vector) => {
      const verdict = verifyWebhookPublicKeySignature({
        publicKey: vector.publicKey,
        id: vector.headers['webhook-id'],
        timestamp: vector.headers['webhook-timestamp'],
        signature: vector.headers['webhook-signature'],
        rawBody: Buffer.from(vector.body.base64, 'base64'),
        toleranceSeconds: vector.toleranceSeconds,
        now: vector.now * 1000,
      });
      expect(verdict).toBe(vector.expected === 'accept');
      expect(specVerifier(vector)).toBe(vector.expected === 'accept');
    },
  );
});
