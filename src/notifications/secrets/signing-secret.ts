import { randomBytes } from 'node:crypto';

export const SIGNING_SECRET_PREFIX = 'whsec_';

/**
 * A new webhook signing secret: `whsec_` and 32 CSPRNG bytes in base64url. The HMAC key is this
 * whole string, UTF-8 encoded, exactly as shown to the user.
 */
export function generateSigningSecret(): string {
  return SIGNING_SECRET_PREFIX + randomBytes(32).toString('base64url');
}
