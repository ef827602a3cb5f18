import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_VERSION = 'v1';

/** `v1=<lowercase hex HMAC-SHA256 of "<timestamp>.<raw body>">`, keyed with the secret string as shown to the user. */
export function signWebhook(secret: string, timestampSeconds: number, rawBody: string | Buffer): string {
  const hmac = createHmac('sha256', secret).update(`${timestampSeconds}.`).update(rawBody);
  return `${SIGNATURE_VERSION}=${hmac.digest('hex')}`;
}

/** What a receiver passes to {@link verifyWebhookSignature}. */
export interface VerifyWebhookSignatureInput {
  /** The signing secret shown once when the webhook was enabled (`whsec_…`). */
  readonly secret: string;
  /** The `X-Service-Timestamp` header. */
  readonly timestamp: string | number | undefined;
  /** The `X-Service-Signature` header (`v1=<hex>`). */
  readonly signature: string | undefined;
  /** The request body exactly as received, before any JSON parsing. */
  readonly rawBody: string | Buffer;
  /** Oldest (and furthest in the future) timestamp accepted, in seconds, e.g. 300. */
  readonly toleranceSeconds: number;
  /** Current time in ms; defaults to `Date.now()`. */
  readonly now?: number;
}

/**
 * Receiver-side check of a delivery: the HMAC over `<timestamp>.<raw body>` matches (constant-time,
 * hex in either case) and the timestamp is within the tolerance. Returns false on any mismatch.
 */
export function verifyWebhookSignature(input: VerifyWebhookSignatureInput): boolean {
  const timestamp = Number(input.timestamp);
  if (!/^\d{1,12}$/.test(String(input.timestamp ?? ''))) return false;
  const nowSeconds = Math.floor((input.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - timestamp) > input.toleranceSeconds) return false;
  const match = /^v1=([0-9a-fA-F]{64})$/.exec(input.signature?.trim() ?? '');
  if (!match) return false;
  const expected = Buffer.from(signWebhook(input.secret, timestamp, input.rawBody).slice(3), 'hex');
  return timingSafeEqual(expected, Buffer.from(match[1], 'hex'));
}
