import { Module } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { ClockModule } from '../clock/clock.module';
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
  imports: [ClockModule],
  providers: [
    {
      provide: RATE_LIMITS,
      inject: [NOTIFICATIONS_OPTIONS],
      useFactory: (o: NotificationsModuleOptions) => resolveRateLimits(o.rateLimits),
    },
    {
      provide: RATE_LIMIT_STORAGE,
      inject: [NOTIFICATIONS_OPTIONS, Clock],
      useFactory: (o: NotificationsModuleOptions, clock: Clock) =>
        (o.rateLimits && o.rateLimits.storage) || new ClockThrottlerStorage(clock),
    },
  ],
  exports: [RATE_LIMITS, RATE_LIMIT_STORAGE],
})
export class RateLimitModule {}
