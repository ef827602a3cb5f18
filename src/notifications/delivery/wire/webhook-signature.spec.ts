import { createHmac } from 'node:crypto';
import { signWebhook, verifyWebhookSignature } from './webhook-signature';

const secret = 'whsec_test-secret';
const body = '{"type":"RATE_SPIKE","title":"Ünïcode ✓"}';
const ts = 1_790_000_000;
const now = ts * 1000;

describe('webhook signature', () => {
  it('is v1= and the lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>" keyed with the secret string', () => {
    const expected = createHmac('sha256', secret).update(`${ts}.${body}`, 'utf8').digest('hex');
    expect(signWebhook(secret, ts, body)).toBe(`v1=${expected}`);
    expect(signWebhook(secret, ts, Buffer.from(body))).toBe(`v1=${expected}`);
  });

  it('verifies a genuine delivery, in lower- or uppercase hex', () => {
    const signature = signWebhook(secret, ts, body);
    expect(verifyWebhookSignature({ secret, timestamp: String(ts), signature, rawBody: body, toleranceSeconds: 300, now })).toBe(true);
    const upper = `v1=${signature.slice(3).toUpperCase()}`;
    expect(
      verifyWebhookSignature({ secret, timestamp: ts, signature: upper, rawBody: Buffer.from(body), toleranceSeconds: 300, now }),
    ).toBe(true);
  });

  it.each([
    ['another secret', { secret: 'whsec_other' }],
    ['a re-serialized body', { rawBody: JSON.stringify(JSON.parse(body), null, 1) }],
    ['another timestamp', { timestamp: String(ts + 1) }],
    ['a stale timestamp', { now: now + 301_000 }],
    ['a timestamp far in the future', { now: now - 301_000 }],
    ['a missing signature', { signature: undefined }],
    ['a missing timestamp', { timestamp: undefined }],
    ['a non-numeric timestamp', { timestamp: '17e8' }],
    ['another scheme', { signature: `v0=${signWebhook(secret, ts, body).slice(3)}` }],
    ['a truncated signature', { signature: signWebhook(secret, ts, body).slice(0, 40) }],
  ])('rejects %s', (_, change) => {
    const input = { secret, timestamp: String(ts), signature: signWebhook(secret, ts, body), rawBody: body, toleranceSeconds: 300, now };
    expect(verifyWebhookSignature({ ...input, ...change })).toBe(false);
  });
});
