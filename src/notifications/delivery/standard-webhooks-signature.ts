import { createHmac } from 'node:crypto';
import { standardWebhooksKey } from '../secrets/signing-secret';

/**
 * The `webhook-signature` header of Standard Webhooks (https://www.standardwebhooks.com): `v1,<base64 HMAC-SHA256>`
 * over `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the secret's decoded bytes; one signature per
 * secret, space-separated. Unlike `X-Service-Signature`, it covers the event id too.
 */
export function signStandardWebhook(secrets: readonly string[], id: string, timestampSeconds: number, rawBody: string | Buffer): string {
  return secrets
    .map((secret) => {
      const hmac = createHmac('sha256', standardWebhooksKey(secret)).update(`${id}.${timestampSeconds}.`).update(rawBody);
      return `v1,${hmac.digest('base64')}`;
    })
    .join(' ');
}
