import { ConfigurableModuleBuilder, type DynamicModule, Module } from '@nestjs/common';
import type { NotificationsOptionsFactory } from './notifications-options-factory';
import type { NotificationsModuleOptions } from './notifications-options.interface';

/** Extras of `forRoot`/`forRootAsync`, next to the module options. */
interface NotificationsModuleExtras {
  /**
   * Default true: every module of the app injects `WebhookPublisher` and the other exports without importing NotificationsModule.
   * With false, only the module that imports it does (re-export it from a module of yours to share it).
   */
  readonly isGlobal?: boolean;
}

/** Holds the options for the module's own feature modules, whether or not the host sees NotificationsModule globally. */
@Module({})
class NotificationsOptionsModule {}

export const {
  ConfigurableModuleClass: ConfigurableNotificationsModule,
  MODULE_OPTIONS_TOKEN: NOTIFICATIONS_OPTIONS,
  OPTIONS_TYPE: NOTIFICATIONS_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: NOTIFICATIONS_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<NotificationsModuleOptions>({ moduleName: 'Notifications' })
  .setClassMethodName('forRoot')
  .setFactoryMethodName('createNotificationsOptions' satisfies keyof NotificationsOptionsFactory)
  .setExtras<NotificationsModuleExtras>({ isGlobal: true }, withGlobalOptions)
  .build();

// The feature modules inject the options wherever NotificationsModule is imported, so (as TypeORM's core module does) the
// options provider, and whatever it injects, live in a global module of their own; `isGlobal` decides only what hosts see.
function withGlobalOptions(definition: DynamicModule, { isGlobal }: NotificationsModuleExtras): DynamicModule {
  const options: DynamicModule = {
    module: NotificationsOptionsModule,
    global: true,
    imports: definition.imports,
    providers: definition.providers,
    exports: [NOTIFICATIONS_OPTIONS],
  };
  return { ...definition, global: isGlobal, imports: [options], providers: [] };
}
