import { Module } from '@nestjs/common';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { WebhookUrlPolicy } from './webhook-url-policy';

@Module({
  providers: [
    {
      provide: WebhookUrlPolicy,
      inject: [NOTIFICATIONS_OPTIONS],
      useFactory: ({ resolver, allowedCidrs }: NotificationsModuleOptions) => new WebhookUrlPolicy({ resolver, allowedCidrs }),
    },
  ],
  exports: [WebhookUrlPolicy],
})
export class UrlPolicyModule {}
