import { Webhook } from 'standardwebhooks';
import { generateSigningSecret } from '../secrets/signing-secret';
import { signStandardWebhook } from './standard-webhooks-signature';
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
