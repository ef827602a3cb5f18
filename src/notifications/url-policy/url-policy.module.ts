import { Module } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { ClockModule } from '../clock/clock.module';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { WebhookUrlPolicy } from './webhook-url-policy';

@Module({
  imports: [ClockModule],
  providers: [
    {
      provide: WebhookUrlPolicy,
      inject: [NOTIFICATIONS_OPTIONS, Clock],
      useFactory: ({ resolver, allowedCidrs, hostResolution, delivery }: NotificationsModuleOptions, clock: Clock) =>
        new WebhookUrlPolicy({
          resolver,
          allowedCidrs,
          hostResolution,
          // A connect-time lookup ends with the attempt it belongs to (the policy's default is the spec's 5 s, as the sender's).
          connectLookupTimeoutMs: delivery?.timeoutMs,
          now: () => clock.now(),
        }),
    },
  ],
  exports: [WebhookUrlPolicy],
})
export class UrlPolicyModule {}
