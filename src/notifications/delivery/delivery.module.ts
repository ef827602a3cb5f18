import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { ClockModule } from '../clock/clock.module';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { PreferencesModule } from '../preferences/preferences.module';
import { UrlGuardModule } from '../url-guard/url-guard.module';
import { WebhookUrlGuard } from '../url-guard/url-guard';
import { DeliveriesController } from './deliveries.controller';
import { DeliveryEvents } from './delivery-events';
import { DeliveryLogService } from './delivery-log.service';
import { AfterCommit } from './engine/after-commit';
import { DeliveryOutboxRepository } from './engine/delivery-outbox.repository';
import { OutboxEngine } from './engine/outbox-engine';
import { DELIVERY_SETTINGS, type DeliverySettings, deliverySettings } from './delivery-settings';
import { WebhookSender } from './http/webhook-sender';
import { InternalEventsController } from './internal-events.controller';
import { InternalTokenGuard } from './internal-token.guard';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookDeliveryAttempt } from './webhook-delivery-attempt.entity';
import { WebhookEvent } from './webhook-event.entity';
import { WebhookPublisher } from './webhook-publisher';

@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEvent, WebhookDelivery, WebhookDeliveryAttempt]),
    ClockModule,
    AuthModule,
    PreferencesModule,
    UrlGuardModule,
  ],
  controllers: [DeliveriesController, InternalEventsController],
  providers: [
    { provide: DELIVERY_SETTINGS, inject: [NOTIFICATIONS_OPTIONS], useFactory: deliverySettings },
    {
      provide: WebhookSender,
      inject: [WebhookUrlGuard, NOTIFICATIONS_OPTIONS, DELIVERY_SETTINGS],
      useFactory: (guard: WebhookUrlGuard, options: NotificationsModuleOptions, settings: DeliverySettings) =>
        // As many connections per origin as attempts in flight: an attempt never waits for a pooled connection while its deadline runs.
        new WebhookSender({
          guard,
          extraCaPem: options.extraCaPem,
          timeoutMs: settings.timeoutMs,
          connectionsPerOrigin: settings.concurrency,
        }),
    },
    DeliveryEvents,
    DeliveryOutboxRepository,
    AfterCommit,
    OutboxEngine,
    DeliveryLogService,
    WebhookPublisher,
    InternalTokenGuard,
  ],
  exports: [WebhookPublisher, OutboxEngine, DeliveryEvents, ClockModule],
})
export class DeliveryModule {}
