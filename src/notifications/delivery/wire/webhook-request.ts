import type { WebhookRequest } from '../http/webhook-sender';
import { SignatureScheme, type WebhookSigning } from '../../secrets/signature-scheme';
import { signStandardWebhook, signStandardWebhookEd25519 } from './standard-webhooks-signature';
import { signWebhook } from './webhook-signature';

export interface WebhookRequestParts {
  readonly url: string;
  readonly body: string;
  readonly type: string;
  readonly eventId: string;
  readonly attempt: number;
  /** The delivery's number in the user's stream of this URL (`X-Service-Sequence`); null or absent: no header. */
  readonly sequence?: number | null;
  /**
   * Required: a delivery is never sent unsigned. The signing secret alone (HMAC, as every webhook had before Ed25519),
   * or the webhook's schemes and keys.
   */
  readonly secret: string | WebhookSigning;
  /** With a secret string, during a rotation's overlap, the secret before it: `webhook-signature` carries its signature too. */
  readonly previousSecret?: string | null;
  readonly userAgent: string;
  readonly nowMs: number;
  /** `traceparent` (and `tracestate`) of this attempt's span, when its event was published in a trace. */
  readonly traceHeaders?: Readonly<Record<string, string>>;
}

/** The request of one attempt: the stored body bytes, signed with this attempt's timestamp. */
export function buildWebhookRequest(parts: WebhookRequestParts): WebhookRequest {
  const signing = signingOf(parts);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': parts.userAgent,
    'x-service-type': parts.type,
    'x-service-event-id': parts.eventId,
    'x-service-attempt': String(parts.attempt),
  };
  if (parts.sequence != null) headers['x-service-sequence'] = String(parts.sequence);
  const timestamp = Math.floor(parts.nowMs / 1000);
  headers['x-service-timestamp'] = String(timestamp);
  const hmac = signing.schemes.includes(SignatureScheme.HMAC);
  if (hmac) headers['x-service-signature'] = signWebhook(signing.secret, timestamp, parts.body);
  // The same delivery for off-the-shelf verifiers (Standard Webhooks): `v1,` with the same secret, `v1a,` with the key pair.
  headers['webhook-id'] = parts.eventId;
  headers['webhook-timestamp'] = String(timestamp);
  const signatures: string[] = [];
  if (hmac) {
    const secrets = signing.previousSecret ? [signing.secret, signing.previousSecret] : [signing.secret];
    signatures.push(signStandardWebhook(secrets, parts.eventId, timestamp, parts.body));
  }
  if (signing.schemes.includes(SignatureScheme.ED25519)) {
    if (signing.signingKeys.length === 0) throw new Error('An Ed25519-signed webhook needs its private key');
    signatures.push(signStandardWebhookEd25519(signing.signingKeys, parts.eventId, timestamp, parts.body));
  }
  headers['webhook-signature'] = signatures.join(' ');
  // Not signed (neither scheme covers headers beyond its own): tracing never changes what a receiver verifies.
  Object.assign(headers, parts.traceHeaders);
  return { url: parts.url, body: parts.body, headers };
}

function signingOf(parts: WebhookRequestParts): WebhookSigning {
  if (typeof parts.secret !== 'string') return parts.secret;
  return { schemes: [SignatureScheme.HMAC], secret: parts.secret, previousSecret: parts.previousSecret ?? null, signingKeys: [] };
}
