import { SetMetadata } from '@nestjs/common';
import type { RateLimitTier } from './rate-limit-options';

export const RATE_LIMIT_TIER = Symbol('RATE_LIMIT_TIER');

/** Puts a route in a stricter tier on top of the `settings` limit every guarded route has. */
export const RateLimit = (tier: Exclude<RateLimitTier, 'settings'>) => SetMetadata(RATE_LIMIT_TIER, tier);
