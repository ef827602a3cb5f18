import { Module } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { ClockModule } from '../clock/clock.module';
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from '../delivery/http/webhook-sender';
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
          // A connect-time lookup ends with the attempt it belongs to.
          connectLookupTimeoutMs: delivery?.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS,
          now: () => clock.now(),
        }),
    },
  ],
  exports: [WebhookUrlPolicy],
})
export class UrlPolicyModule {}
