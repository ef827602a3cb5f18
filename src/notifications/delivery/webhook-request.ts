import type { WebhookRequest } from './http/webhook-sender';
import { signWebhook } from './webhook-signature';

export interface WebhookRequestParts {
  readonly url: string;
  readonly body: string;
  readonly type: string;
  readonly eventId: string;
  readonly attempt: number;
  /** Required: a delivery is never sent unsigned. */
  readonly secret: string;
  readonly userAgent: string;
  readonly nowMs: number;
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
  return { url: parts.url, body: parts.body, headers };
}
