import type { WebhookRequest } from './http/webhook-sender';
import { signStandardWebhook } from './standard-webhooks-signature';
import { signWebhook } from './webhook-signature';

export interface WebhookRequestParts {
  readonly url: string;
  readonly body: string;
  readonly type: string;
  readonly eventId: string;
  readonly attempt: number;
  /** Required: a delivery is never sent unsigned. */
  readonly secret: string;
  /** During a secret rotation's overlap, the secret before it: `webhook-signature` carries its signature too. */
  readonly previousSecret?: string | null;
  readonly userAgent: string;
  readonly nowMs: number;
  /** `traceparent` (and `tracestate`) of this attempt's span, when its event was published in a trace. */
  readonly traceHeaders?: Readonly<Record<string, string>>;
}

/** The request of one attempt: the stored body bytes, signed with this attempt's timestamp. */
export function buildWebhookRequest(parts: WebhookRequestParts): WebhookRequest {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': parts.userAgent,
    'x-service-type': parts.type,
    'x-service-event-id': parts.eventId,
    'x-service-attempt': String(parts.attempt),
  };
  const timestamp = Math.floor(parts.nowMs / 1000);
  headers['x-service-timestamp'] = String(timestamp);
  headers['x-service-signature'] = signWebhook(parts.secret, timestamp, parts.body);
  // The same delivery for off-the-shelf verifiers (Standard Webhooks), signed with the same secret.
  headers['webhook-id'] = parts.eventId;
  headers['webhook-timestamp'] = String(timestamp);
  const secrets = parts.previousSecret ? [parts.secret, parts.previousSecret] : [parts.secret];
  headers['webhook-signature'] = signStandardWebhook(secrets, parts.eventId, timestamp, parts.body);
  // Not signed (neither scheme covers headers beyond its own): tracing never changes what a receiver verifies.
  Object.assign(headers, parts.traceHeaders);
  return { url: parts.url, body: parts.body, headers };
}
