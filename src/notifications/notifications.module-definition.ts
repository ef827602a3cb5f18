import { ConfigurableModuleBuilder, type DynamicModule, Module, type Provider } from '@nestjs/common';
import type { NotificationsOptionsFactory } from './notifications-options-factory';
import type { NotificationsModuleOptions } from './notifications-options.interface';
import { validatedNotificationsOptions } from './notifications-options-validation';

/** Extras of `forRoot`/`forRootAsync`, next to the module options. */
interface NotificationsModuleExtras {
  /**
   * Default true: every module of the app injects `WebhookPublisher` and the other exports without importing NotificationsModule.
   * With false, only the module that imports it does (re-export it from a module of yours to share it).
   */
  readonly isGlobal?: boolean;
}

const GIVEN_OPTIONS = Symbol('NotificationsModuleOptions as given');

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
// The options the host gave are provided under GIVEN_OPTIONS; NOTIFICATIONS_OPTIONS, which every feature injects, is
// their validated version, so no part of the module ever sees options the standalone service's checks would refuse.
function withGlobalOptions(definition: DynamicModule, { isGlobal }: NotificationsModuleExtras): DynamicModule {
  const given = (definition.providers ?? []).map((provider) =>
    typeof provider === 'object' && 'provide' in provider && provider.provide === NOTIFICATIONS_OPTIONS
      ? { ...provider, provide: GIVEN_OPTIONS }
      : provider,
  );
  const validated: Provider = { provide: NOTIFICATIONS_OPTIONS, inject: [GIVEN_OPTIONS], useFactory: validatedNotificationsOptions };
  const options: DynamicModule = {
    module: NotificationsOptionsModule,
    global: true,
    imports: definition.imports,
    providers: [...given, validated],
    exports: [NOTIFICATIONS_OPTIONS],
  };
  return { ...definition, global: isGlobal, imports: [options], providers: [] };
}
