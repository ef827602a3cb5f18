import { Module } from '@nestjs/common';
import { SystemClock } from '../clock/clock';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { ClockThrottlerStorage } from './clock-throttler-storage';
import { resolveRateLimits } from './rate-limit-options';

export const RATE_LIMITS = Symbol('RATE_LIMITS');
export const RATE_LIMIT_STORAGE = Symbol('RATE_LIMIT_STORAGE');

/**
 * The module's own limits and counters. It deliberately does not use the global `ThrottlerModule`,
 * so a host app's throttler configuration and ours never mix, and the host's routes are not limited.
 */
@Module({
  providers: [
    { provide: RATE_LIMITS, inject: [NOTIFICATIONS_OPTIONS], useFactory: (o: NotificationsModuleOptions) => resolveRateLimits(o.rateLimits) },
    {
      provide: RATE_LIMIT_STORAGE,
      inject: [NOTIFICATIONS_OPTIONS],
      useFactory: (o: NotificationsModuleOptions) => (o.rateLimits && o.rateLimits.storage) || new ClockThrottlerStorage(o.clock ?? new SystemClock()),
    },
  ],
  exports: [RATE_LIMITS, RATE_LIMIT_STORAGE],
})
export class RateLimitModule {}
