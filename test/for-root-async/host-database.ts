import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { NOTIFICATIONS_MIGRATIONS } from '@funding/notification-webhooks';

/** What every host module below has next to NotificationsModule: its DataSource (SQLite in memory) and its scheduler. */
export const hostInfrastructure = () => [
  TypeOrmModule.forRoot({
    type: 'better-sqlite3',
    database: ':memory:',
    autoLoadEntities: true,
    migrations: NOTIFICATIONS_MIGRATIONS,
    migrationsRun: true,
  }),
  ScheduleModule.forRoot(),
];
