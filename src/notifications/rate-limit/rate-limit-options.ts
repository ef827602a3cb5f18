import type { ThrottlerStorage } from '@nestjs/throttler';

/** At most `limit` requests per `ttlMs` window. */
export interface RateLimit {
  readonly limit: number;
  readonly ttlMs: number;
}

/**
 * Request limits on the settings endpoints, counted per authenticated user (per client IP for requests
 * that are not authenticated). Each tier left out keeps its default.
 */
export interface RateLimitOptions {
  /** Every settings endpoint together (default 120 per minute). */
  readonly settings?: RateLimit;
  /** `POST …/webhook/test`, which makes an outbound request at once (default 5 per minute). */
  readonly testSend?: RateLimit;
  /** `POST …/webhook-deliveries/{id}/redeliver` (default 10 per minute). */
  readonly redeliver?: RateLimit;
  /** `POST …/webhook-deliveries/recover`, which can queue thousands of deliveries (default 2 per minute). */
  readonly recover?: RateLimit;
  /**
   * Where hits are counted. Default: this instance's memory, so each instance counts on its own and N
   * instances allow N times the limit. Give a shared `ThrottlerStorage` (e.g. Redis) to count across instances.
   */
  readonly storage?: ThrottlerStorage;
}

export type RateLimitTier = 'settings' | 'testSend' | 'redeliver' | 'recover';

export const DEFAULT_RATE_LIMITS: Readonly<Record<RateLimitTier, RateLimit>> = {
  settings: { limit: 120, ttlMs: 60_000 },
  testSend: { limit: 5, ttlMs: 60_000 },
  redeliver: { limit: 10, ttlMs: 60_000 },
  recover: { limit: 2, ttlMs: 60_000 },
};

/** The limits in force, defaults filled in; `null` when rate limiting is off. Throws on a bad value. */
export function resolveRateLimits(options: RateLimitOptions | false | undefined): Record<RateLimitTier, RateLimit> | null {
  if (options === false) return null;
  const tiers = Object.keys(DEFAULT_RATE_LIMITS) as RateLimitTier[];
  return Object.fromEntries(
    tiers.map((tier) => {
      const limit = options?.[tier] ?? DEFAULT_RATE_LIMITS[tier];
      if (!Number.isInteger(limit.limit) || limit.limit < 1 || !Number.isInteger(limit.ttlMs) || limit.ttlMs < 1000) {
        throw new Error(`NotificationsModule: rateLimits.${tier} needs an integer limit ≥ 1 and an integer ttlMs ≥ 1000`);
      }
      return [tier, { limit: limit.limit, ttlMs: limit.ttlMs }];
    }),
  ) as Record<RateLimitTier, RateLimit>;
}
