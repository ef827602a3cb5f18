import { createHmac, type KeyObject, sign, verify } from 'node:crypto';
import { verificationKeyOf } from '../../secrets/signing-key';
import { standardWebhooksKey } from '../../secrets/signing-secret';

/**
 * The `webhook-signature` header of Standard Webhooks (https://www.standardwebhooks.com): `v1,<base64 HMAC-SHA256>`
 * over `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the secret's decoded bytes; one signature per
 * secret, space-separated. Unlike `X-Service-Signature`, it covers the event id too.
 */
export function signStandardWebhook(secrets: readonly string[], id: string, timestampSeconds: number, rawBody: string | Buffer): string {
  return secrets
    .map((secret) => {
      const { key, encoding } = standardWebhooksKey(secret);
      const hmac = createHmac('sha256', key, { encoding }).update(`${id}.${timestampSeconds}.`).update(rawBody);
      return `v1,${hmac.digest('base64')}`;
    })
    .join(' ');
}

/**
 * Standard Webhooks' asymmetric signatures: `v1a,<base64 Ed25519 signature>` over `<webhook-id>.<webhook-timestamp>.<raw
 * body>`, one per private key, space-separated. A receiver verifies them with the public key (`whpk_…`) alone.
 */
export function signStandardWebhookEd25519(
  privateKeys: readonly KeyObject[],
  id: string,
  timestampSeconds: number,
  rawBody: string | Buffer,
): string {
  const signed = Buffer.concat([Buffer.from(`${id}.${timestampSeconds}.`, 'utf8'), Buffer.from(rawBody)]);
  return privateKeys.map((key) => `v1a,${sign(null, signed, key).toString('base64')}`).join(' ');
}

/** What a receiver passes to {@link verifyWebhookPublicKeySignature}: the Standard Webhooks headers and the raw body. */
export interface VerifyWebhookPublicKeySignatureInput {
  /** The webhook's public key as the settings API shows it (`whpk_…`). */
  readonly publicKey: string;
  /** The `webhook-id` header. */
  readonly id: string | undefined;
  /** The `webhook-timestamp` header. */
  readonly timestamp: string | number | undefined;
  /** The `webhook-signature` header: space-separated `v1a,<base64>` (and `v1,` ones, which this ignores). */
  readonly signature: string | undefined;
  /** The request body exactly as received, before any JSON parsing. */
  readonly rawBody: string | Buffer;
  /** Oldest (and furthest in the future) timestamp accepted, in seconds, e.g. 300. */
  readonly toleranceSeconds: number;
  /** Current time in ms; defaults to `Date.now()`. */
  readonly now?: number;
}

/**
 * Receiver-side check of a delivery with the webhook's public key only: one `v1a` signature of `webhook-signature` is a
 * valid Ed25519 signature of `<webhook-id>.<webhook-timestamp>.<raw body>`, and the timestamp is within the tolerance.
 * Returns false on any mismatch (a malformed key too).
 */
export function verifyWebhookPublicKeySignature(input: VerifyWebhookPublicKeySignatureInput): boolean {
  if (!input.id || !/^\d{1,12}$/.test(String(input.timestamp ?? ''))) return false;
  const timestamp = Number(input.timestamp);
  const nowSeconds = Math.floor((input.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - timestamp) > input.toleranceSeconds) return false;
  let key: KeyObject;
  try {
    key = verificationKeyOf(input.publicKey);
  } catch {
    return false;
  }
  const signed = Buffer.concat([Buffer.from(`${input.id}.${timestamp}.`, 'utf8'), Buffer.from(input.rawBody)]);
  return (input.signature ?? '').split(' ').some((entry) => {
    const match = /^v1a,([A-Za-z0-9+/]{86}==)$/.exec(entry);
    return match !== null && verify(null, signed, key, Buffer.from(match[1], 'base64'));
  });
}
