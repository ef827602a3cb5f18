import { type DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DestinationStream } from 'pino';
import { LogLevel } from './config/environment-variables';
import type { AppConfig } from './config/load-app-config';
import { databaseOptions } from './database/database-options';
import { MigrationLogger } from './database/migration-logger';
import { HealthModule } from './health/health.module';
import { LoggingModule } from './logging/logging.module';
import { MetricsEndpointModule } from './metrics-endpoint/metrics-endpoint.module';
import { serviceMetricsRegistry } from './metrics-endpoint/service-metrics-registry';
import { NotificationsModule, type NotificationsModuleOptions } from '../index';

/** The standalone service: owns the database connection and uses NotificationsModule as any host app would. */
@Module({})
export class AppModule {
  /**
   * `moduleOverrides` lets tests inject a resolver or an allow-list, `logDestination` capture the logs
   * (default stdout); the service itself passes neither.
   */
  static forConfig(
    config: AppConfig,
    moduleOverrides: Partial<NotificationsModuleOptions> = {},
    logDestination?: DestinationStream,
  ): DynamicModule {
    return {
      module: AppModule,
      imports: [
        LoggingModule.forRoot(config.logLevel ?? LogLevel.info, logDestination),
        TypeOrmModule.forRoot({ ...databaseOptions(config.database), logger: new MigrationLogger() }),
        ScheduleModule.forRoot(),
        NotificationsModule.forRootAsync({
          useFactory: (): NotificationsModuleOptions => ({
            ...config.notifications,
            metricsRegistry: serviceMetricsRegistry(),
            ...moduleOverrides,
          }),
        }),
        HealthModule.forRoot(config.shutdownReadinessDelayMs ?? 0),
        MetricsEndpointModule.forToken(config.metricsToken),
      ],
    };
  }
}
