import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { NotificationsModuleOptions } from './notifications-options.interface';

export const {
  ConfigurableModuleClass: ConfigurableNotificationsModule,
  MODULE_OPTIONS_TOKEN: NOTIFICATIONS_OPTIONS,
  OPTIONS_TYPE: NOTIFICATIONS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: NOTIFICATIONS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<NotificationsModuleOptions>({ moduleName: 'Notifications' }).setClassMethodName('forRoot').build();
