import { Webhook, WebhookVerificationError } from 'standardwebhooks';

/**
 * Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the official `standardwebhooks`
 * package: it takes the `whsec_…` secret as it is (its key is the bytes the base64 after `whsec_` encodes), checks
 * `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<raw body>` (any one of several space-separated
 * signatures) and a timestamp within 5 minutes of `Date.now()` (fixed in the package). Its signature covers the event id.
 */
export function verifyStandardWebhook(webhook: Webhook, header: (name: string) => string | undefined, rawBody: Buffer): boolean {
  const headers = {
    'webhook-id': header('webhook-id') ?? '',
    'webhook-timestamp': header('webhook-timestamp') ?? '',
    'webhook-signature': header('webhook-signature') ?? '',
  };
  try {
    // jsonParse: false: only verify here; the caller parses the body and answers 400 when it is not a JSON object.
    webhook.verify(rawBody, headers, { jsonParse: false });
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}
