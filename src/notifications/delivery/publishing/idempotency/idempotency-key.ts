import { createHash } from 'node:crypto';
import { InvalidFieldsException } from '../../../common/api/api-errors';
import { rfc3339Instant } from '../../../common/values/rfc3339';
import type { PublishEventDto } from '../dto/publish-event.dto';

/** The longest `Idempotency-Key` (Stripe's bound); a key fits a UUID, a hash or a producer's own id with room to spare. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
const KEY_PATTERN = /^[\x21-\x7e]+$/;

/** The scope of in-process publishes (`WebhookPublisher` called from the host's code). */
export const HOST_SCOPE = 'host';

/**
 * The scope of the internal endpoint's keys: a digest of its bearer token (never the token itself), so two producers
 * with their own tokens never share keys, and the stored rows say nothing about the token.
 */
export function internalTokenScope(token: string): string {
  return `internal:${createHash('sha256').update(token).digest('hex').slice(0, 32)}`;
}

/** A key as given, checked: 1 to 255 visible ASCII characters (0x21–0x7E, so no spaces); a 400 naming `field` otherwise. */
export function validIdempotencyKey(key: unknown, field: string): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !KEY_PATTERN.test(key)) {
    throw InvalidFieldsException.of(
      field,
      `must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters (letters, digits and punctuation, no spaces), such as a UUID`,
    );
  }
  return key;
}

/**
 * SHA-256 (hex) of the events as the producer meant them: their fields, `createdAt` as the instant it names (or absent:
 * the default, the publish time, differs between a call and its retry) and the payload with its keys sorted. The same
 * events sent again, in any spelling of the same JSON, hash the same; anything that would change a delivery does not.
 */
export function contentHash(events: readonly PublishEventDto[]): string {
  const canonical = events.map((event) => ({
    userId: event.userId,
    type: event.type,
    severity: event.severity,
    title: event.title,
    body: event.body,
    createdAt: event.createdAt === undefined ? null : rfc3339Instant(event.createdAt)!,
    payload: event.payload ?? {},
  }));
  return createHash('sha256').update(canonicalJson(canonical)).digest('hex');
}

// JSON with every object's keys sorted: one text per value, whatever the order the producer wrote its keys in.
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value);
}
