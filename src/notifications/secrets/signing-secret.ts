import { randomBytes } from 'node:crypto';

export const SIGNING_SECRET_PREFIX = 'whsec_';

/**
 * A new webhook signing secret: `whsec_` and 32 CSPRNG bytes in base64 (standard alphabet, padded), the format of
 * Standard Webhooks secrets, so its official libraries take it as it is. One secret, two keys: the `X-Service-Signature`
 * HMAC key is this whole string, UTF-8 encoded, exactly as shown to the user; the `webhook-signature` key is the bytes
 * the base64 after `whsec_` encodes ({@link standardWebhooksKey}).
 */
export function generateSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBytes(32).toString('base64');
}

/**
 * The Standard Webhooks HMAC key of a secret, as `createHmac` takes it: the base64 after `whsec_`, whose bytes are the
 * key. Secrets made before the standard alphabet (base64url, `-` and `_`) decode to their bytes all the same; the
 * official libraries want them rewritten with `+` and `/` (the same bytes). A string with its encoding rather than the
 * decoded Buffer: Node 24 checks a Buffer key for a KeyObject and a CryptoKey by throwing, about 10 µs a signature.
 */
export function standardWebhooksKey(secret: string): { readonly key: string; readonly encoding: 'base64' } {
  return { key: secret.startsWith(SIGNING_SECRET_PREFIX) ? secret.slice(SIGNING_SECRET_PREFIX.length) : secret, encoding: 'base64' };
}
