import { type DynamicModule, Module } from '@nestjs/common';
import { NotificationsModule } from '@funding/notification-webhooks';
import { HostConfig, HostConfigModule } from './host-config.module';
import { hostInfrastructure } from './host-database';

/** forRootAsync({ useFactory }): options from a function of injected providers. */
@Module({})
export class UseFactoryHostModule {
  static forRoot(config: HostConfig): DynamicModule {
    return {
      module: UseFactoryHostModule,
      imports: [
        ...hostInfrastructure(),
        NotificationsModule.forRootAsync({
          imports: [HostConfigModule.register(config)],
          inject: [HostConfig],
          useFactory: (host: HostConfig) => host.notificationsOptions(),
        }),
      ],
    };
  }
}
