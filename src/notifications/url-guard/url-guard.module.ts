import { Module } from '@nestjs/common';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { WebhookUrlGuard } from './url-guard';

@Module({
  providers: [
    {
      provide: WebhookUrlGuard,
      inject: [NOTIFICATIONS_OPTIONS],
      useFactory: ({ resolver, allowedCidrs }: NotificationsModuleOptions) => new WebhookUrlGuard({ resolver, allowedCidrs }),
    },
  ],
  exports: [WebhookUrlGuard],
})
export class UrlGuardModule {}
