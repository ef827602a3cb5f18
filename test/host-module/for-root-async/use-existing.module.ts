import { type DynamicModule, Module } from '@nestjs/common';
import { NotificationsModule } from '@funding/notification-webhooks';
import { type HostConfig, HostConfigModule, NotificationsConfig } from './host-config.module';
import { hostInfrastructure } from './host-database';

/** forRootAsync({ useExisting }): the host's own NotificationsConfig instance, exported by an imported module. */
@Module({})
export class UseExistingHostModule {
  static forRoot(config: HostConfig): DynamicModule {
    return {
      module: UseExistingHostModule,
      imports: [
        ...hostInfrastructure(),
        NotificationsModule.forRootAsync({ imports: [HostConfigModule.register(config)], useExisting: NotificationsConfig }),
      ],
    };
  }
}
