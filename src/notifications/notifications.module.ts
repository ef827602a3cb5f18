import { type DynamicModule, Module } from '@nestjs/common';
import {
  ConfigurableNotificationsModule,
  NOTIFICATIONS_ASYNC_OPTIONS_TYPE,
  NOTIFICATIONS_OPTIONS,
  NOTIFICATIONS_OPTIONS_TYPE,
} from './notifications.module-definition';
import { DeliveryModule } from './delivery/delivery.module';
import { NotificationsMetricsModule } from './metrics/notifications-metrics.module';
import { NotificationsStartupCheck } from './notifications-startup-check';
import { WebhookAutoDisableModule } from './auto-disable/webhook-auto-disable.module';
import { PreferencesModule } from './preferences/preferences.module';
import { RetentionModule } from './retention/retention.module';
import { SchedulerModule } from './scheduler/scheduler.module';

/**
 * The webhook notification channel: settings API, signing secrets, delivery.
 * Needs a TypeORM DataSource with {@link NOTIFICATIONS_ENTITIES} (or `autoLoadEntities`) and
 * {@link NOTIFICATIONS_MIGRATIONS}.
 */
@Module({
  imports: [PreferencesModule, DeliveryModule, SchedulerModule, NotificationsMetricsModule, WebhookAutoDisableModule, RetentionModule],
  providers: [NotificationsStartupCheck],
  exports: [PreferencesModule, DeliveryModule, SchedulerModule, NotificationsMetricsModule, WebhookAutoDisableModule, RetentionModule],
})
export class NotificationsModule extends ConfigurableNotificationsModule {
  static forRoot(options: typeof NOTIFICATIONS_OPTIONS_TYPE): DynamicModule {
    return shareOptionsWithFeatures(super.forRoot(options));
  }

  static forRootAsync(options: typeof NOTIFICATIONS_ASYNC_OPTIONS_TYPE): DynamicModule {
    return shareOptionsWithFeatures(super.forRootAsync(options));
  }
}

// The feature modules inject the options, so (as TypeORM's core module does) the options are global.
function shareOptionsWithFeatures(module: DynamicModule): DynamicModule {
  return { ...module, global: true, exports: [...(module.exports ?? []), NOTIFICATIONS_OPTIONS] };
}
