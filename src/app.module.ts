import { type DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { AppConfig } from './config/load-app-config';
import { databaseOptions } from './database/database-options';
import { NotificationsModule } from './notifications/notifications.module';
import type { NotificationsModuleOptions } from './notifications/notifications-options.interface';

/** The standalone service: owns the database connection and uses NotificationsModule as any host app would. */
@Module({})
export class AppModule {
  /** `moduleOverrides` lets tests inject a resolver or an allow-list; the service itself passes none. */
  static forConfig(config: AppConfig, moduleOverrides: Partial<NotificationsModuleOptions> = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRoot(databaseOptions(config.database)),
        ScheduleModule.forRoot(),
        NotificationsModule.forRootAsync({
          useFactory: (): NotificationsModuleOptions => ({
            jwtSecret: config.jwtSecret,
            encryptionKeys: config.encryptionKeys,
            serviceSite: config.serviceSite,
            internalApiToken: config.internalApiToken,
            allowedCidrs: config.webhookAllowedCidrs,
            extraCaPem: config.webhookExtraCaPem,
            ...moduleOverrides,
          }),
        }),
      ],
    };
  }
}
