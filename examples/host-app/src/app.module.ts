import { type DynamicModule, Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { NotificationsModule } from '@funding/notification-webhooks';
import { AuthModule } from './auth/auth.module';
import { AuthService } from './auth/auth.service';
import { databaseOptions } from './database/database-options';
import type { HostConfig } from './host-config';
import { InboxModule } from './inbox/inbox.module';
import { LoansModule } from './loans/loans.module';

@Module({})
export class AppModule {
  static forRoot(config: HostConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        TypeOrmModule.forRoot(databaseOptions(config.databaseUrl)),
        ScheduleModule.forRoot(), // ours, once: NotificationsModule's retry cron runs on it
        NotificationsModule.forRootAsync({
          imports: [AuthModule],
          inject: [AuthService],
          useFactory: (auth: AuthService) => ({
            resolveUserId: (request) => auth.userIdOf(request), // the settings API trusts our authentication
            encryptionKeys: [{ id: 'k1', key: config.webhookSecretsKey }],
            ...config.notificationsForTests,
          }),
        }),
        LoansModule,
        InboxModule,
      ],
    };
  }
}
