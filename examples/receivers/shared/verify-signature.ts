import { createHmac, timingSafeEqual } from 'node:crypto';

export interface SignedDelivery {
  /** The `whsec_…` secret shown once when the webhook was enabled; the HMAC key is this whole string as UTF-8. */
  readonly secret: string;
  /** `X-Service-Timestamp`: Unix seconds. */
  readonly timestamp: string | undefined;
  /** `X-Service-Signature`: `v1=<hex>`. */
  readonly signature: string | undefined;
  /** The body bytes exactly as received, never re-serialized JSON. */
  readonly rawBody: Buffer;
  /** Your clock, Unix seconds. */
  readonly nowSeconds: number;
  /** Replay window: reject timestamps further than this from now, either way. */
  readonly toleranceSeconds: number;
}

/** True when the signature is `v1=` + hex HMAC-SHA256 of `<timestamp>.<raw body>` and the timestamp is within the tolerance. */
export function verifySignature(delivery: SignedDelivery): boolean {
  const { timestamp, signature } = delivery;
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(delivery.nowSeconds - Number(timestamp)) > delivery.toleranceSeconds) return false;
  const received = /^v1=([0-9a-fA-F]{64})$/.exec(signature ?? '');
  if (!received) return false;
  const expected = createHmac('sha256', delivery.secret).update(`${timestamp}.`).update(delivery.rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(received[1], 'hex'));
}
