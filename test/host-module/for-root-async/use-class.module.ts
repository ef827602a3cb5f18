import { type DynamicModule, Module } from '@nestjs/common';
import { NotificationsModule } from '@funding/notification-webhooks';
import { type HostConfig, HostConfigModule, NotificationsConfig } from './host-config.module';
import { hostInfrastructure } from './host-database';

/** forRootAsync({ useClass }): the module creates its own NotificationsConfig, whose dependencies come from `imports`. */
@Module({})
export class UseClassHostModule {
  static forRoot(config: HostConfig): DynamicModule {
    return {
      module: UseClassHostModule,
      imports: [
        ...hostInfrastructure(),
        NotificationsModule.forRootAsync({ imports: [HostConfigModule.register(config)], useClass: NotificationsConfig }),
      ],
    };
  }
}
