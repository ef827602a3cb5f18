import type { NotificationsModuleOptions } from './notifications-options.interface';

/**
 * A provider that builds the options of `NotificationsModule.forRootAsync({ useClass })` or `({ useExisting })`.
 *
 * @publicApi
 */
export interface NotificationsOptionsFactory {
  createNotificationsOptions(): NotificationsModuleOptions | Promise<NotificationsModuleOptions>;
}
