import { createHash, createHmac, createPrivateKey, createPublicKey, type KeyObject, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { signStandardWebhook, signStandardWebhookEd25519, signWebhook } from '../../index';

/** Where `npm run vectors` writes the vectors; shipped in the package as `@funding/notification-webhooks/signature-vectors.json`. */
export const SIGNATURE_VECTORS_FILE = 'conformance/signature-vectors.json';

/** The raw request body: `base64` is authoritative; `utf8` is the same bytes as text, null when they are not valid UTF-8. */
export interface VectorBody {
  readonly base64: string;
  readonly utf8: string | null;
}

/** One signature test case: verify `headers` over `body` with `secret` at `now`, and expect `expected`. */
export interface SignatureVector {
  readonly name: string;
  readonly description: string;
  readonly expected: 'accept' | 'reject';
  /** Why: `valid` for an accepted case, else what is wrong (stable names, usable in your own test output). */
  readonly reason: string;
  readonly secret: string;
  /** The delivery's headers as received; a header missing from the request is missing here. */
  readonly headers: { readonly 'X-Service-Timestamp'?: string; readonly 'X-Service-Signature'?: string };
  readonly body: VectorBody;
  /** The receiver's clock at verification, Unix seconds. */
  readonly now: number;
  /** The replay tolerance to apply: reject when |now - timestamp| > toleranceSeconds. */
  readonly toleranceSeconds: number;
}

export interface SignatureVectorsDocument {
  readonly description: string;
  readonly scheme: string;
  readonly vectors: readonly SignatureVector[];
  /** The same deliveries' Standard Webhooks headers, for a verifier of that scheme. */
  readonly standardWebhooks: {
    readonly description: string;
    readonly scheme: string;
    readonly vectors: readonly StandardWebhooksVector[];
  };
  /** Standard Webhooks' asymmetric `v1a` signatures (Ed25519), for a verifier that holds only the public key. */
  readonly standardWebhooksEd25519: {
    readonly description: string;
    readonly scheme: string;
    readonly vectors: readonly Ed25519Vector[];
  };
}

/** One `v1a` case: verify `headers` over `body` with `publicKey` (`whpk_…`) at `now`, and expect `expected`. */
export interface Ed25519Vector {
  readonly name: string;
  readonly description: string;
  readonly expected: 'accept' | 'reject';
  readonly reason: string;
  readonly publicKey: string;
  readonly headers: { readonly 'webhook-id'?: string; readonly 'webhook-timestamp'?: string; readonly 'webhook-signature'?: string };
  readonly body: VectorBody;
  readonly now: number;
  readonly toleranceSeconds: number;
}

/** One Standard Webhooks case: verify `headers` over `body` with `secret` at `now`, and expect `expected`. */
export interface StandardWebhooksVector {
  readonly name: string;
  readonly description: string;
  readonly expected: 'accept' | 'reject';
  readonly reason: string;
  readonly secret: string;
  readonly headers: { readonly 'webhook-id'?: string; readonly 'webhook-timestamp'?: string; readonly 'webhook-signature'?: string };
  readonly body: VectorBody;
  readonly now: number;
  readonly toleranceSeconds: number;
}

const NOW = 1_764_000_000; // 2025-11-24T16:00:00Z
const TOLERANCE = 300;
// Fixed secrets in the service's format (whsec_ + 32 bytes base64url), so the file is the same on every run.
const fixedSecret = (label: string) => `whsec_${createHash('sha256').update(label).digest('base64url')}`;
const SECRET = fixedSecret('signature-vectors/secret');
const OTHER_SECRET = fixedSecret('signature-vectors/other-secret');

const EVENT = {
  type: 'LOAN_EXECUTED',
  severity: 'INFO',
  title: 'Loan executed',
  body: 'A USD loan of 1500 at 0.02% per day was executed.',
  createdAt: '2025-11-24T15:59:58.000Z',
  payload: { currency: 'USD', amount: 1500, rate: 0.0002 },
  userId: 42,
};
const COMPACT = Buffer.from(JSON.stringify(EVENT), 'utf8');
const MULTIBYTE = Buffer.from(
  JSON.stringify({ ...EVENT, title: 'Prêt exécuté €', body: 'Zinsen für 1500 €: 0,02 % pro Tag 📈 — 融资', payload: {} }),
  'utf8',
);
// Not valid UTF-8 (a lone 0xff): a verifier that decodes the body to text before hashing gets other bytes.
// The compact body with one value changed after signing (amount 1500 → 9500).
const TAMPERED = Buffer.from(COMPACT.toString('utf8').replace('"amount":1500', '"amount":9500'), 'utf8');
const NOT_UTF8 = Buffer.concat([Buffer.from('{"note":"', 'utf8'), Buffer.from([0xff, 0xfe]), Buffer.from('"}', 'utf8')]);

interface Case {
  readonly name: string;
  readonly description: string;
  readonly reason: string;
  readonly body?: Buffer;
  /** The timestamp the signature is made with; default `NOW`. */
  readonly signedAt?: number;
  /** The timestamp header; default `String(signedAt)`; null: header missing. */
  readonly timestampHeader?: string | null;
  /** Turns the signer's `v1=<hex>` into the signature header; null: header missing. */
  readonly signatureHeader?: ((signed: string) => string) | null;
  readonly signWith?: string;
  /** What the signer signs, when not the delivered body (re-serialization cases). */
  readonly signedBody?: Buffer;
}

const ACCEPT: readonly Case[] = [
  { name: 'valid', reason: 'valid', description: 'A delivery as the service sends it: compact JSON, lowercase hex, timestamp = now.' },
  {
    name: 'valid-uppercase-hex',
    reason: 'valid',
    description: 'The same signature in uppercase hex; the contract allows either case.',
    signatureHeader: (signed) => `v1=${signed.slice(3).toUpperCase()}`,
  },
  {
    name: 'valid-multibyte-body',
    reason: 'valid',
    description: 'A body with accented letters, €, an emoji and CJK: the HMAC is over the UTF-8 bytes, not over characters.',
    body: MULTIBYTE,
  },
  {
    name: 'valid-non-utf8-bytes',
    reason: 'valid',
    description: 'A body that is not valid UTF-8: hash the bytes as received, never a decoded string.',
    body: NOT_UTF8,
  },
  {
    name: 'valid-empty-body',
    reason: 'valid',
    description: 'An empty body: the signed string is "<timestamp>." alone.',
    body: Buffer.alloc(0),
  },
  {
    name: 'valid-oldest-within-tolerance',
    reason: 'valid',
    description: 'Signed exactly toleranceSeconds before now: still inside the window.',
    signedAt: NOW - TOLERANCE,
  },
  {
    name: 'valid-future-within-tolerance',
    reason: 'valid',
    description: "Signed 60 s after the receiver's now (the receiver's clock is behind): inside the window.",
    signedAt: NOW + 60,
  },
];

const REJECT: readonly Case[] = [
  { name: 'wrong-secret', reason: 'wrong-secret', description: 'Signed with another secret.', signWith: OTHER_SECRET },
  {
    name: 'secret-decoded-as-base64',
    reason: 'wrong-secret',
    description: 'Signed with the base64url-decoded bytes after whsec_: the key is the whole secret string as UTF-8, not decoded.',
    signatureHeader: () => {
      const decodedKey = Buffer.from(SECRET.slice('whsec_'.length), 'base64url');
      return `v1=${createHmac('sha256', decodedKey).update(`${NOW}.`).update(COMPACT).digest('hex')}`;
    },
  },
  {
    name: 'tampered-body',
    reason: 'tampered-body',
    description: 'One byte of the body changed after signing (amount 1500 → 9500).',
    body: TAMPERED,
    signedBody: COMPACT,
  },
  {
    name: 'whitespace-reserialized',
    reason: 'body-reserialized',
    description: 'The verifier hashed JSON.stringify(parsed, null, 2) instead of the raw bytes: same JSON value, other bytes.',
    body: Buffer.from(JSON.stringify(EVENT, null, 2), 'utf8'),
    signedBody: COMPACT,
  },
  {
    name: 'key-order-reserialized',
    reason: 'body-reserialized',
    description: 'The body re-serialized with its keys in another order: same JSON value, other bytes.',
    body: Buffer.from(JSON.stringify(Object.fromEntries(Object.entries(EVENT).reverse())), 'utf8'),
    signedBody: COMPACT,
  },
  {
    name: 'stale-timestamp',
    reason: 'timestamp-outside-tolerance',
    description: 'Correctly signed toleranceSeconds + 1 before now: a replay, reject.',
    signedAt: NOW - TOLERANCE - 1,
  },
  {
    name: 'future-timestamp',
    reason: 'timestamp-outside-tolerance',
    description: 'Correctly signed toleranceSeconds + 1 after now: reject.',
    signedAt: NOW + TOLERANCE + 1,
  },
  {
    name: 'timestamp-header-changed',
    reason: 'timestamp-not-signed',
    description: 'A valid signature, but the timestamp header was moved 1 s on: the timestamp is part of the signed string.',
    timestampHeader: String(NOW + 1),
  },
  {
    name: 'timestamp-in-milliseconds',
    reason: 'timestamp-outside-tolerance',
    description: 'Signed with a millisecond timestamp: the header is Unix seconds, so this is far outside any tolerance.',
    signedAt: NOW * 1000,
  },
  {
    name: 'timestamp-not-a-number',
    reason: 'malformed-timestamp',
    description: 'The timestamp header is not an integer.',
    timestampHeader: 'yesterday',
  },
  { name: 'missing-timestamp', reason: 'missing-header', description: 'No X-Service-Timestamp header.', timestampHeader: null },
  { name: 'missing-signature', reason: 'missing-header', description: 'No X-Service-Signature header.', signatureHeader: null },
  {
    name: 'missing-v1-prefix',
    reason: 'malformed-signature',
    description: 'The bare hex digest without "v1=".',
    signatureHeader: (signed) => signed.slice(3),
  },
  {
    name: 'unknown-version',
    reason: 'malformed-signature',
    description: 'The right digest tagged "v2=": only v1 is defined.',
    signatureHeader: (signed) => `v2=${signed.slice(3)}`,
  },
  {
    name: 'truncated-signature',
    reason: 'malformed-signature',
    description: 'The digest cut to 63 hex digits: a prefix match is not a match.',
    signatureHeader: (signed) => signed.slice(0, -1),
  },
  {
    name: 'multiple-signatures',
    reason: 'malformed-signature',
    description:
      'Two comma-separated values ("v1=<other>,v1=<right>"). The service sends exactly one (a rotated secret stops signing at once), so this is not a delivery.',
    signatureHeader: (signed) => `v1=${signWebhook(OTHER_SECRET, NOW, COMPACT).slice(3)},${signed}`,
  },
];

function vector(expected: SignatureVector['expected'], c: Case): SignatureVector {
  const body = c.body ?? COMPACT;
  const signedAt = c.signedAt ?? NOW;
  const signed = signWebhook(c.signWith ?? SECRET, signedAt, c.signedBody ?? body);
  const timestamp = c.timestampHeader === undefined ? String(signedAt) : c.timestampHeader;
  const signature = c.signatureHeader === undefined ? signed : c.signatureHeader && c.signatureHeader(signed);
  return {
    name: c.name,
    description: c.description,
    expected,
    reason: c.reason,
    secret: SECRET,
    headers: {
      ...(timestamp === null ? {} : { 'X-Service-Timestamp': timestamp }),
      ...(signature === null ? {} : { 'X-Service-Signature': signature }),
    },
    body: vectorBody(body),
    now: NOW,
    toleranceSeconds: TOLERANCE,
  };
}

// The Standard Webhooks cases use a secret in today's format (standard base64), which its official libraries take as it is.
const SW_SECRET = `whsec_${createHash('sha256').update('signature-vectors/standard-webhooks').digest('base64')}`;
const SW_OTHER_SECRET = `whsec_${createHash('sha256').update('signature-vectors/standard-webhooks-other').digest('base64')}`;
const EVENT_ID = '6f1c2a7e-3b0d-4e51-9a8c-2d4b7e9f0a13';

interface StandardWebhooksCase {
  readonly name: string;
  readonly description: string;
  readonly reason: string;
  readonly body?: Buffer;
  readonly signedAt?: number;
  /** The headers as sent, from the valid ones; a null value drops the header. */
  readonly headers?: (valid: { id: string; timestamp: string; signature: string }) => Record<string, string | null>;
  readonly signWith?: readonly string[];
  readonly signedBody?: Buffer;
}

const SW_ACCEPT: readonly StandardWebhooksCase[] = [
  { name: 'sw-valid', reason: 'valid', description: 'A delivery as the service sends it.' },
  {
    name: 'sw-valid-multibyte-body',
    reason: 'valid',
    description: 'A body with multibyte characters: the HMAC is over the UTF-8 bytes.',
    body: MULTIBYTE,
  },
  {
    name: 'sw-valid-two-signatures',
    reason: 'valid',
    description: 'During a secret rotation: one signature per secret, space-separated; either one matching is enough.',
    signWith: [SW_OTHER_SECRET, SW_SECRET],
  },
  {
    name: 'sw-valid-oldest-within-tolerance',
    reason: 'valid',
    description: 'Signed exactly toleranceSeconds before now.',
    signedAt: NOW - TOLERANCE,
  },
];

const SW_REJECT: readonly StandardWebhooksCase[] = [
  { name: 'sw-wrong-secret', reason: 'wrong-secret', description: 'Signed with another secret.', signWith: [SW_OTHER_SECRET] },
  {
    name: 'sw-id-changed',
    reason: 'id-not-signed',
    description: 'A captured delivery replayed under another webhook-id: the id is part of the signed string.',
    headers: () => ({ 'webhook-id': 'a-different-event-id' }),
  },
  {
    name: 'sw-tampered-body',
    reason: 'tampered-body',
    description: 'One byte of the body changed after signing.',
    body: TAMPERED,
    signedBody: COMPACT,
  },
  {
    name: 'sw-stale-timestamp',
    reason: 'timestamp-outside-tolerance',
    description: 'Signed toleranceSeconds + 1 before now.',
    signedAt: NOW - TOLERANCE - 1,
  },
  {
    name: 'sw-timestamp-header-changed',
    reason: 'timestamp-not-signed',
    description: 'The timestamp header moved 1 s on: it is part of the signed string.',
    headers: () => ({ 'webhook-timestamp': String(NOW + 1) }),
  },
  {
    name: 'sw-key-is-the-string',
    reason: 'wrong-secret',
    description:
      'Signed with the whole secret string as the key (the X-Service-Signature key): Standard Webhooks keys with the decoded bytes.',
    headers: () => ({
      'webhook-signature': `v1,${createHmac('sha256', SW_SECRET).update(`${EVENT_ID}.${NOW}.`).update(COMPACT).digest('base64')}`,
    }),
  },
  {
    name: 'sw-missing-signature',
    reason: 'missing-header',
    description: 'No webhook-signature header.',
    headers: () => ({ 'webhook-signature': null }),
  },
  { name: 'sw-missing-id', reason: 'missing-header', description: 'No webhook-id header.', headers: () => ({ 'webhook-id': null }) },
];

function standardWebhooksVector(expected: StandardWebhooksVector['expected'], c: StandardWebhooksCase): StandardWebhooksVector {
  const body = c.body ?? COMPACT;
  const signedAt = c.signedAt ?? NOW;
  const valid = {
    id: EVENT_ID,
    timestamp: String(signedAt),
    signature: signStandardWebhook(c.signWith ?? [SW_SECRET], EVENT_ID, signedAt, c.signedBody ?? body),
  };
  const headers: Record<string, string | null> = {
    'webhook-id': valid.id,
    'webhook-timestamp': valid.timestamp,
    'webhook-signature': valid.signature,
    ...c.headers?.(valid),
  };
  return {
    name: c.name,
    description: c.description,
    expected,
    reason: c.reason,
    secret: SW_SECRET,
    headers: Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== null)),
    body: vectorBody(body),
    now: NOW,
    toleranceSeconds: TOLERANCE,
  };
}

// Fixed Ed25519 keys (32-byte seeds from a label), so the file is the same on every run: Ed25519 signatures are deterministic.
// (RFC 8410's PKCS#8 wrapping of a raw seed.)
const fixedSigningKey = (label: string): KeyObject =>
  createPrivateKey({
    key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), createHash('sha256').update(label).digest()]),
    format: 'der',
    type: 'pkcs8',
  });
const ED_KEY = fixedSigningKey('signature-vectors/ed25519');
const ED_OTHER_KEY = fixedSigningKey('signature-vectors/ed25519-other');
// The public key as the settings API shows it: whpk_ and the raw 32 bytes in base64.
const ED_PUBLIC_KEY = `whpk_${Buffer.from(createPublicKey(ED_KEY).export({ format: 'jwk' }).x!, 'base64url').toString('base64')}`;

interface Ed25519Case {
  readonly name: string;
  readonly description: string;
  readonly reason: string;
  readonly body?: Buffer;
  readonly signedAt?: number;
  /** The headers as sent, from the valid ones; a null value drops the header. */
  readonly headers?: (valid: { id: string; timestamp: string; signature: string }) => Record<string, string | null>;
  readonly signWith?: readonly KeyObject[];
  readonly signedBody?: Buffer;
}

const ED_ACCEPT: readonly Ed25519Case[] = [
  { name: 'v1a-valid', reason: 'valid', description: 'A delivery of an Ed25519-signed webhook as the service sends it.' },
  {
    name: 'v1a-valid-multibyte-body',
    reason: 'valid',
    description: 'A body with multibyte characters: the signature is over the UTF-8 bytes.',
    body: MULTIBYTE,
  },
  {
    name: 'v1a-valid-non-utf8-bytes',
    reason: 'valid',
    description: 'A body that is not valid UTF-8: verify the bytes as received, never a decoded string.',
    body: NOT_UTF8,
  },
  {
    name: 'v1a-valid-two-keys',
    reason: 'valid',
    description: 'During a key rotation: one v1a signature per key, space-separated; the one of the key you hold is enough.',
    signWith: [ED_OTHER_KEY, ED_KEY],
  },
  {
    name: 'v1a-valid-beside-hmac',
    reason: 'valid',
    description: 'A webhook signed with both schemes: skip the v1 (HMAC) entry, which a public key cannot check, and verify the v1a one.',
    headers: (valid) => ({ 'webhook-signature': `${signStandardWebhook([SW_SECRET], EVENT_ID, NOW, COMPACT)} ${valid.signature}` }),
  },
  {
    name: 'v1a-valid-oldest-within-tolerance',
    reason: 'valid',
    description: 'Signed exactly toleranceSeconds before now.',
    signedAt: NOW - TOLERANCE,
  },
];

const ED_REJECT: readonly Ed25519Case[] = [
  { name: 'v1a-wrong-key', reason: 'wrong-key', description: 'Signed with another private key.', signWith: [ED_OTHER_KEY] },
  {
    name: 'v1a-id-changed',
    reason: 'id-not-signed',
    description: 'A captured delivery replayed under another webhook-id: the id is part of the signed string.',
    headers: () => ({ 'webhook-id': 'a-different-event-id' }),
  },
  {
    name: 'v1a-tampered-body',
    reason: 'tampered-body',
    description: 'One byte of the body changed after signing.',
    body: TAMPERED,
    signedBody: COMPACT,
  },
  {
    name: 'v1a-whitespace-reserialized',
    reason: 'body-reserialized',
    description: 'The verifier checked JSON.stringify(parsed, null, 2) instead of the raw bytes: same JSON value, other bytes.',
    body: Buffer.from(JSON.stringify(EVENT, null, 2), 'utf8'),
    signedBody: COMPACT,
  },
  {
    name: 'v1a-stale-timestamp',
    reason: 'timestamp-outside-tolerance',
    description: 'Signed toleranceSeconds + 1 before now.',
    signedAt: NOW - TOLERANCE - 1,
  },
  {
    name: 'v1a-future-timestamp',
    reason: 'timestamp-outside-tolerance',
    description: 'Signed toleranceSeconds + 1 after now.',
    signedAt: NOW + TOLERANCE + 1,
  },
  {
    name: 'v1a-timestamp-header-changed',
    reason: 'timestamp-not-signed',
    description: 'The timestamp header moved 1 s on: it is part of the signed string.',
    headers: () => ({ 'webhook-timestamp': String(NOW + 1) }),
  },
  {
    name: 'v1a-body-only-signed',
    reason: 'wrong-signed-content',
    description: 'An Ed25519 signature of the body alone, without "<webhook-id>.<webhook-timestamp>." before it.',
    headers: () => ({ 'webhook-signature': `v1a,${sign(null, COMPACT, ED_KEY).toString('base64')}` }),
  },
  {
    name: 'v1a-tagged-v1',
    reason: 'malformed-signature',
    description: 'The right Ed25519 signature tagged "v1,": v1 is the HMAC scheme, so a v1a verifier ignores it.',
    headers: (valid) => ({ 'webhook-signature': valid.signature.replace(/^v1a,/, 'v1,') }),
  },
  {
    name: 'v1a-hmac-only',
    reason: 'no-v1a-signature',
    description: 'Only a valid v1 (HMAC) signature: nothing a public key can verify.',
    headers: () => ({ 'webhook-signature': signStandardWebhook([SW_SECRET], EVENT_ID, NOW, COMPACT) }),
  },
  {
    name: 'v1a-truncated-signature',
    reason: 'malformed-signature',
    description: 'The signature cut to 63 of its 64 bytes.',
    headers: (valid) => ({
      'webhook-signature': `v1a,${Buffer.from(valid.signature.slice(4), 'base64').subarray(0, 63).toString('base64')}`,
    }),
  },
  {
    name: 'v1a-missing-signature',
    reason: 'missing-header',
    description: 'No webhook-signature header.',
    headers: () => ({ 'webhook-signature': null }),
  },
  { name: 'v1a-missing-id', reason: 'missing-header', description: 'No webhook-id header.', headers: () => ({ 'webhook-id': null }) },
];

function ed25519Vector(expected: Ed25519Vector['expected'], c: Ed25519Case): Ed25519Vector {
  const body = c.body ?? COMPACT;
  const signedAt = c.signedAt ?? NOW;
  const valid = {
    id: EVENT_ID,
    timestamp: String(signedAt),
    signature: signStandardWebhookEd25519(c.signWith ?? [ED_KEY], EVENT_ID, signedAt, c.signedBody ?? body),
  };
  const headers: Record<string, string | null> = {
    'webhook-id': valid.id,
    'webhook-timestamp': valid.timestamp,
    'webhook-signature': valid.signature,
    ...c.headers?.(valid),
  };
  return {
    name: c.name,
    description: c.description,
    expected,
    reason: c.reason,
    publicKey: ED_PUBLIC_KEY,
    headers: Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => entry[1] !== null)),
    body: vectorBody(body),
    now: NOW,
    toleranceSeconds: TOLERANCE,
  };
}

function vectorBody(body: Buffer): VectorBody {
  const utf8 = body.toString('utf8');
  return { base64: body.toString('base64'), utf8: Buffer.from(utf8, 'utf8').equals(body) ? utf8 : null };
}

/** The vectors, made with the service's own signer; deterministic. */
export function buildSignatureVectors(): SignatureVectorsDocument {
  return {
    description:
      'Conformance vectors for X-Service-Signature v1. For each vector, verify headers over the bytes of body.base64 with secret, ' +
      "with the receiver's clock at now (Unix seconds) and the given toleranceSeconds; the verdict must equal expected. " +
      'Generated by npm run vectors from the service signer.',
    scheme: 'X-Service-Signature: v1=<hex HMAC-SHA256, key = secret as UTF-8, message = X-Service-Timestamp + "." + raw body>',
    vectors: [...ACCEPT.map((c) => vector('accept', c)), ...REJECT.map((c) => vector('reject', c))],
    standardWebhooks: {
      description:
        'Conformance vectors for the Standard Webhooks headers every delivery also carries (https://www.standardwebhooks.com). ' +
        "Verify headers over the bytes of body.base64 with secret, with the receiver's clock at now and the given toleranceSeconds.",
      scheme:
        'webhook-signature: v1,<base64 HMAC-SHA256, key = the bytes the base64 after whsec_ encodes, message = webhook-id + "." + webhook-timestamp + "." + raw body>, space-separated',
      vectors: [...SW_ACCEPT.map((c) => standardWebhooksVector('accept', c)), ...SW_REJECT.map((c) => standardWebhooksVector('reject', c))],
    },
    standardWebhooksEd25519: {
      description:
        "Conformance vectors for Standard Webhooks' asymmetric signatures, which a webhook with the ed25519 signature scheme " +
        "carries. Verify headers over the bytes of body.base64 with publicKey alone, with the receiver's clock at now and the " +
        'given toleranceSeconds.',
      scheme:
        'webhook-signature: v1a,<base64 Ed25519 signature, public key = the 32 bytes the base64 after whpk_ encodes, message = ' +
        'webhook-id + "." + webhook-timestamp + "." + raw body>, space-separated; v1 entries beside it are HMAC signatures',
      vectors: [...ED_ACCEPT.map((c) => ed25519Vector('accept', c)), ...ED_REJECT.map((c) => ed25519Vector('reject', c))],
    },
  };
}

export const signatureVectorsJson = (): string => `${JSON.stringify(buildSignatureVectors(), null, 2)}\n`;

if (require.main === module) {
  writeFileSync(join(__dirname, '..', '..', '..', SIGNATURE_VECTORS_FILE), signatureVectorsJson());
  console.log(`Wrote ${SIGNATURE_VECTORS_FILE}`);
}
