import { Module } from '@nestjs/common';
import { ConfigurableNotificationsModule } from './notifications.module-definition';
import { DeliveryEvents } from './delivery/events/delivery-events.service';
import { DeliveryModule, HOST_FACING_DELIVERY_EVENTS, HOST_FACING_PUBLISHER } from './delivery/delivery.module';
import { WebhookPublisher } from './delivery/publishing/webhook-publisher.service';
import { NotificationsMetricsModule } from './metrics/notifications-metrics.module';
import { NotificationsStartupCheck } from './notifications-startup-check.service';
import { WebhookHealthModule } from './webhook-health/webhook-health.module';
import { WebhookAutoDisableModule } from './auto-disable/webhook-auto-disable.module';
import { NotificationPreferences } from './preferences/notification-preferences.service';
import { PreferencesModule } from './preferences/preferences.module';
import { RetentionModule } from './retention/retention.module';
import { SchedulerModule } from './scheduler/scheduler.module';
import { SecretsReencryption } from './secrets/secrets-reencryption.service';
import { HOST_FACING_REENCRYPTION, SecretsModule } from './secrets/secrets.module';

/**
 * The webhook notification channel: settings API, signing secrets, delivery.
 * Needs a TypeORM DataSource with {@link NOTIFICATIONS_ENTITIES} (or `autoLoadEntities`) and
 * {@link NOTIFICATIONS_MIGRATIONS}, and the host app's `ScheduleModule.forRoot()`.
 *
 * Hosts inject `WebhookPublisher`, `DeliveryEvents`, `NotificationPreferences`, `NotificationsMetrics`,
 * `RetentionService` and `SecretsReencryption`, and nothing else: the engine, the scheduler, the clock, auto-disable, webhook health and
 * the preferences and secrets internals (which hand out decrypted signing secrets) stay inside.
 *
 * @publicApi
 */
@Module({
  imports: [
    PreferencesModule,
    SecretsModule,
    DeliveryModule,
    SchedulerModule,
    NotificationsMetricsModule,
    WebhookHealthModule,
    WebhookAutoDisableModule,
    RetentionModule,
  ],
  providers: [
    NotificationsStartupCheck,
    NotificationPreferences,
    { provide: WebhookPublisher, useExisting: HOST_FACING_PUBLISHER },
    { provide: DeliveryEvents, useExisting: HOST_FACING_DELIVERY_EVENTS },
    { provide: SecretsReencryption, useExisting: HOST_FACING_REENCRYPTION },
  ],
  // NotificationsMetricsModule and RetentionModule export their one host-facing class only.
  exports: [WebhookPublisher, DeliveryEvents, NotificationPreferences, SecretsReencryption, NotificationsMetricsModule, RetentionModule],
})
export class NotificationsModule extends ConfigurableNotificationsModule {}
