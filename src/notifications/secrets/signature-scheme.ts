import type { KeyObject } from 'node:crypto';

/** How a webhook's deliveries are signed; a webhook has one or both. */
export enum SignatureScheme {
  /** `X-Service-Signature` (`v1=<hex>`) and Standard Webhooks `v1,<base64>`: HMAC-SHA256 with the signing secret. */
  HMAC = 'hmac',
  /** Standard Webhooks `v1a,<base64>`: Ed25519 with the webhook's private key, verified with its public key. */
  ED25519 = 'ed25519',
}

/** Every scheme, in the order a response lists them. */
export const SIGNATURE_SCHEMES: readonly SignatureScheme[] = [SignatureScheme.HMAC, SignatureScheme.ED25519];

/** A webhook's schemes as stored (`hmac`, `ed25519` or `hmac,ed25519`), canonical order, no duplicates. */
export function storedSchemes(schemes: readonly SignatureScheme[]): string {
  return SIGNATURE_SCHEMES.filter((scheme) => schemes.includes(scheme)).join(',');
}

/** The schemes of a stored value; an unknown part is ignored and none at all means HMAC, the default. */
export function schemesOf(stored: string | null | undefined): SignatureScheme[] {
  const parts = (stored ?? '').split(',');
  const schemes = SIGNATURE_SCHEMES.filter((scheme) => parts.includes(scheme));
  return schemes.length > 0 ? schemes : [SignatureScheme.HMAC];
}

/** What signs a webhook's requests: its schemes, its HMAC secret(s) and, for Ed25519, its private key(s). */
export interface WebhookSigning {
  readonly schemes: readonly SignatureScheme[];
  /** The signing secret: signs `X-Service-Signature` and `v1,` when the schemes include HMAC. */
  readonly secret: string;
  /** During a secret rotation's overlap, the secret before it (signs `v1,` too); null outside one. */
  readonly previousSecret: string | null;
  /** Ed25519 private keys, the current one first, then during a key rotation's overlap the one before it. */
  readonly signingKeys: readonly KeyObject[];
}
