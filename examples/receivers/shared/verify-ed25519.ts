import { createPublicKey, type KeyObject, verify } from 'node:crypto';

/**
 * The webhook's public key as the settings API shows it (`signingPublicKey`: `whpk_` and the raw 32-byte Ed25519 key
 * in base64), as a node:crypto key. Throws when it is not one.
 */
export function ed25519PublicKey(whpk: string): KeyObject {
  const raw = Buffer.from(whpk.replace(/^whpk_/, ''), 'base64');
  if (raw.length !== 32) throw new Error('WEBHOOK_PUBLIC_KEY must be whpk_ and a base64 32-byte Ed25519 public key');
  return createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
}

export interface Ed25519SignedDelivery {
  readonly publicKey: KeyObject;
  /** `webhook-id`, `webhook-timestamp` and `webhook-signature` as received. */
  readonly id: string | undefined;
  readonly timestamp: string | undefined;
  readonly signature: string | undefined;
  /** The body bytes exactly as received, never re-serialized JSON. */
  readonly rawBody: Buffer;
  /** Your clock, Unix seconds. */
  readonly nowSeconds: number;
  /** Replay window: reject timestamps further than this from now, either way. */
  readonly toleranceSeconds: number;
}

/**
 * Standard Webhooks' asymmetric scheme with the public key alone: one `v1a,<base64>` of the space-separated
 * `webhook-signature` (two during a key rotation; `v1,` HMAC entries beside them are skipped) is a valid Ed25519
 * signature of `<webhook-id>.<webhook-timestamp>.<raw body>`, and the timestamp is within the tolerance.
 */
export function verifyEd25519(delivery: Ed25519SignedDelivery): boolean {
  const { id, timestamp, signature } = delivery;
  if (!id || !timestamp || !/^\d{1,12}$/.test(timestamp) || !signature) return false;
  if (Math.abs(delivery.nowSeconds - Number(timestamp)) > delivery.toleranceSeconds) return false;
  const signed = Buffer.concat([Buffer.from(`${id}.${timestamp}.`, 'utf8'), delivery.rawBody]);
  return signature.split(' ').some((entry) => {
    const [version, encoded] = entry.split(',', 2);
    const bytes = Buffer.from(encoded ?? '', 'base64');
    return version === 'v1a' && bytes.length === 64 && verify(null, signed, delivery.publicKey, bytes);
  });
}
