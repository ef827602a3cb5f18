import type { WebhookEventBodyDto } from './webhook-openapi';

/** The JSON body of a delivery (spec 2.3), with its keys in the documented order. Signed as these exact bytes. */
export function webhookBody(event: WebhookEventBodyDto): string {
  const { type, severity, title, body, createdAt, payload, userId } = event;
  return JSON.stringify({ type, severity, title, body, createdAt, payload, userId });
}
