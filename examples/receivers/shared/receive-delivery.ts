import type { SignatureVector } from './run-vectors';
import { verifySignature } from './verify-signature';

/** What every Node example does with a delivery, whatever the framework: verify, deduplicate, process, answer. */
export interface DeliveryAnswer {
  readonly status: number;
  readonly body: string;
}

const toleranceSeconds = Number(process.env.WEBHOOK_TOLERANCE_SECONDS ?? 300);
// In memory for the example; in production, a unique key on the event id in your database.
const processedEventIds = new Set<string>();

const log = (outcome: string, fields: object = {}) => console.log(JSON.stringify({ outcome, ...fields }));

/** `header(name)` reads a request header (any case); `rawBody` is the body as received. */
export function receiveDelivery(header: (name: string) => string | undefined, rawBody: Buffer): DeliveryAnswer {
  const eventId = header('x-service-event-id') ?? '';
  const verified = verifySignature({
    secret: process.env.WEBHOOK_SECRET ?? '',
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
  if (processedEventIds.has(eventId)) {
    log('duplicate', { eventId });
    return { status: 200, body: 'duplicate' };
  }
  const event = JSON.parse(rawBody.toString('utf8')) as { type: string; userId: number };
  // Your processing goes here: route event.type to your alerts, dashboards, …
  processedEventIds.add(eventId);
  log('processed', { eventId, type: event.type, userId: event.userId });
  return { status: 200, body: 'processed' };
}

/** The same check on a conformance vector (see run-vectors.ts). */
export const verifyVector = (vector: SignatureVector, rawBody: Buffer): boolean =>
  verifySignature({
    secret: vector.secret,
    timestamp: vector.headers['X-Service-Timestamp'],
    signature: vector.headers['X-Service-Signature'],
    rawBody,
    nowSeconds: vector.now,
    toleranceSeconds: vector.toleranceSeconds,
  });
