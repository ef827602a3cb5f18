import { Webhook } from 'standardwebhooks';
import { SignatureScheme } from '../../secrets/signature-scheme';
import { generateSigningKeyPair, publicKeyOf, signingKeyOf } from '../../secrets/signing-key';
import { generateSigningSecret } from '../../secrets/signing-secret';
import { signStandardWebhook, verifyWebhookPublicKeySignature } from './standard-webhooks-signature';
import { buildWebhookRequest } from './webhook-request';
import { verifyWebhookSignature } from './webhook-signature';

const body = JSON.stringify({ type: 'LOAN_EXECUTED', title: 'Prêt exécuté €', payload: { amount: 1500 } });
const eventId = '0b7e3c1e-5a52-4f43-9d1e-6f1f0e2b9a10';

function request(secret: string, nowMs = Date.now()) {
  return buildWebhookRequest({
    url: 'https://hooks.example.com/h',
    secret,
    body,
    type: 'LOAN_EXECUTED',
    eventId,
    attempt: 1,
    userAgent: 'ua',
    nowMs,
  });
}

describe('Standard Webhooks headers', () => {
  it('verify with the official standardwebhooks library, as they are, with a new secret', () => {
    const secret = generateSigningSecret();
    const { headers } = request(secret);
    expect(headers['webhook-id']).toBe(eventId);
    expect(headers['webhook-timestamp']).toBe(headers['x-service-timestamp']);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('leave X-Service-Signature as it was: the HMAC of "<timestamp>.<body>" keyed with the whole secret string', () => {
    const secret = generateSigningSecret();
    const { headers } = request(secret, 1_764_000_000_000);
    expect(
      verifyWebhookSignature({
        secret,
        timestamp: headers['x-service-timestamp'],
        signature: headers['x-service-signature'],
        rawBody: body,
        toleranceSeconds: 300,
        now: 1_764_000_000_000,
      }),
    ).toBe(true);
  });

  it('cover the event id: the same body and timestamp under another webhook-id fails', () => {
    const secret = generateSigningSecret();
    const { headers } = request(secret);
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'another-event' })).toThrow('No matching signature');
  });

  it('sign a secret made before the standard alphabet (base64url) with its bytes: the official library verifies it rewritten with + and /, padded', () => {
    const encoded = Buffer.alloc(32, 0xfb).toString('base64url'); // 43 characters of the base64url alphabet, - and _ among them
    expect(encoded).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(encoded).toContain('-');
    const { headers } = request(`whsec_${encoded}`);
    const rewritten = `whsec_${encoded.replaceAll('-', '+').replaceAll('_', '/')}=`; // one = pads it to 44
    expect(new Webhook(rewritten).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('carry one signature per secret, space-separated, each verifying alone', () => {
    const [older, newer] = [generateSigningSecret(), generateSigningSecret()];
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = signStandardWebhook([older, newer], eventId, timestamp, body);
    expect(signature.split(' ')).toHaveLength(2);
    const headers = { 'webhook-id': eventId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
    expect(new Webhook(older).verify(body, headers)).toBeTruthy();
    expect(new Webhook(newer).verify(body, headers)).toBeTruthy();
  });
});

describe('Ed25519 (v1a) signatures', () => {
  const nowMs = 1_764_000_000_000;
  const pairs = [generateSigningKeyPair(), generateSigningKeyPair()];
  const keys = pairs.map((pair) => signingKeyOf(pair.privateKey));
  const signed = (schemes: SignatureScheme[], signingKeys = keys.slice(0, 1), secret = generateSigningSecret()) =>
    buildWebhookRequest({
      url: 'https://hooks.example.com/h',
      secret: { schemes, secret, previousSecret: null, signingKeys },
      body,
      type: 'LOAN_EXECUTED',
      eventId,
      attempt: 1,
      userAgent: 'ua',
      nowMs,
    });
  const verifies = (publicKey: string, headers: Record<string, string>) =>
    verifyWebhookPublicKeySignature({
      publicKey,
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
      rawBody: body,
      toleranceSeconds: 300,
      now: nowMs,
    });

  it('signs ed25519 alone with v1a only: no X-Service-Signature, no v1', () => {
    const { headers } = signed([SignatureScheme.ED25519]);
    expect(headers['x-service-signature']).toBeUndefined();
    expect(headers['webhook-signature']).toMatch(/^v1a,[A-Za-z0-9+/]{86}==$/);
    expect(verifies(pairs[0].publicKey, headers)).toBe(true);
    expect(verifies(pairs[1].publicKey, headers)).toBe(false);
  });

  it('signs both schemes with X-Service-Signature, v1 and v1a, which the HMAC verifiers and the public key each accept', () => {
    const secret = generateSigningSecret();
    const { headers } = signed([SignatureScheme.HMAC, SignatureScheme.ED25519], keys.slice(0, 1), secret);
    expect(headers['webhook-signature'].split(' ').map((entry) => entry.split(',')[0])).toEqual(['v1', 'v1a']);
    expect(
      verifyWebhookSignature({
        secret,
        timestamp: headers['x-service-timestamp'],
        signature: headers['x-service-signature'],
        rawBody: body,
        toleranceSeconds: 300,
        now: nowMs,
      }),
    ).toBe(true);
    expect(verifies(pairs[0].publicKey, headers)).toBe(true);
  });

  it("signs with each key during a rotation's overlap, and never unsigned when a key is missing", () => {
    const { headers } = signed([SignatureScheme.ED25519], keys);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    for (const pair of pairs) expect(verifies(pair.publicKey, headers)).toBe(true);
    expect(() => signed([SignatureScheme.ED25519], [])).toThrow(/private key/);
  });

  it('reads the public key the way receivers do: whpk_ and the 32 raw bytes', () => {
    expect(pairs[0].publicKey).toMatch(/^whpk_[A-Za-z0-9+/]{43}=$/);
    expect(publicKeyOf(keys[0])).toBe(pairs[0].publicKey);
    expect(verifies('whpk_AAAA', signed([SignatureScheme.ED25519]).headers)).toBe(false);
  });
});
