import { Webhook } from 'standardwebhooks';
import { atClock, type Ed25519Vector, type SignatureVector, type StandardWebhooksVector } from './run-vectors';
import { ed25519PublicKey, verifyEd25519 } from './verify-ed25519';
import { verifyStandardWebhook } from './verify-standard-webhook';
import { verifySignature } from './verify-signature';

/** What every Node example does with a delivery, whatever the framework: verify, parse, deduplicate, process, answer. */
export interface DeliveryAnswer {
  readonly status: number;
  readonly body: string;
}

export type DeliveryReceiver = (header: (name: string) => string | undefined, rawBody: Buffer) => DeliveryAnswer;

/**
 * `x-service` (the default) checks `X-Service-Signature`; `standard-webhooks` checks the `v1` HMAC of `webhook-signature`;
 * `ed25519` its `v1a` signature, with the webhook's public key only (for a webhook with the `ed25519` signature scheme).
 */
export type WebhookScheme = 'x-service' | 'standard-webhooks' | 'ed25519';
const SCHEMES: readonly WebhookScheme[] = ['x-service', 'standard-webhooks', 'ed25519'];

const log = (outcome: string, fields: object = {}) => console.log(JSON.stringify({ outcome, ...fields }));

/** The body as a JSON object, or undefined for anything else (empty, invalid JSON, an array, a string, null, …). */
export function parseJsonObject(rawBody: Buffer): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(rawBody.toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The receiver's handler, set up from the environment: `WEBHOOK_SECRET` (or, with `WEBHOOK_SCHEME=ed25519`,
 * `WEBHOOK_PUBLIC_KEY`: the `whpk_…` the settings API shows), `WEBHOOK_SCHEME` and `WEBHOOK_TOLERANCE_SECONDS`
 * (default 300; the `standardwebhooks` package has its own fixed 5 minutes).
 * `header(name)` reads a request header (any case); `rawBody` is the body as received.
 */
export function deliveryReceiver(): DeliveryReceiver {
  const secret = process.env.WEBHOOK_SECRET ?? '';
  const scheme = (process.env.WEBHOOK_SCHEME ?? 'x-service') as WebhookScheme;
  if (!SCHEMES.includes(scheme)) throw new Error(`WEBHOOK_SCHEME is one of ${SCHEMES.join(', ')}`);
  const toleranceSeconds = Number(process.env.WEBHOOK_TOLERANCE_SECONDS ?? 300);
  const webhook = scheme === 'standard-webhooks' ? new Webhook(secret) : undefined; // throws now if the secret is not base64
  // No secret at all for this one: the public key is all a receiver needs (it throws now if it is not a key).
  const publicKey = scheme === 'ed25519' ? ed25519PublicKey(process.env.WEBHOOK_PUBLIC_KEY ?? '') : undefined;
  // In memory for the example; in production, a unique key on the event id in your database.
  const processedEventIds = new Set<string>();

  return (header, rawBody) => {
    // The event id to deduplicate on: the same value under either scheme (only webhook-signature covers it).
    const eventId = (scheme === 'x-service' ? header('x-service-event-id') : header('webhook-id')) ?? '';
    const verified = publicKey
      ? verifyEd25519({
          publicKey,
          id: header('webhook-id'),
          timestamp: header('webhook-timestamp'),
          signature: header('webhook-signature'),
          rawBody,
          nowSeconds: Math.floor(Date.now() / 1000),
          toleranceSeconds,
        })
      : webhook
        ? verifyStandardWebhook(webhook, header, rawBody)
        : verifySignature({
            secret,
            timestamp: header('x-service-timestamp'),
            signature: header('x-service-signature'),
            rawBody,
            nowSeconds: Math.floor(Date.now() / 1000),
            toleranceSeconds,
          });
    if (!verified) {
      log('rejected', { eventId });
      return { status: 400, body: 'bad signature' };
    }
    // Parse only what verified, and answer 400 (not 500) to a body that is not a JSON object: retrying will not fix it.
    const event = parseJsonObject(rawBody);
    if (!event) {
      log('malformed', { eventId });
      return { status: 400, body: 'body is not a JSON object' };
    }
    if (processedEventIds.has(eventId)) {
      log('duplicate', { eventId });
      return { status: 200, body: 'duplicate' };
    }
    // Your processing goes here: route event.type to your alerts, dashboards, …
    processedEventIds.add(eventId);
    log('processed', { eventId, type: event.type, userId: event.userId });
    return { status: 200, body: 'processed' };
  };
}

/** The same checks on the conformance vectors (see run-vectors.ts), one verifier per scheme. */
export const vectorVerifiers = {
  'x-service': (vector: SignatureVector, rawBody: Buffer): boolean =>
    verifySignature({
      secret: vector.secret,
      timestamp: vector.headers['X-Service-Timestamp'],
      signature: vector.headers['X-Service-Signature'],
      rawBody,
      nowSeconds: vector.now,
      toleranceSeconds: vector.toleranceSeconds,
    }),
  'standard-webhooks': (vector: StandardWebhooksVector, rawBody: Buffer): boolean =>
    atClock(vector, () => verifyStandardWebhook(new Webhook(vector.secret), (name) => vector.headers[name], rawBody)),
  ed25519: (vector: Ed25519Vector, rawBody: Buffer): boolean =>
    verifyEd25519({
      publicKey: ed25519PublicKey(vector.publicKey),
      id: vector.headers['webhook-id'],
      timestamp: vector.headers['webhook-timestamp'],
      signature: vector.headers['webhook-signature'],
      rawBody,
      nowSeconds: vector.now,
      toleranceSeconds: vector.toleranceSeconds,
    }),
};
