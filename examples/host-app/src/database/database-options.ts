import { NOTIFICATIONS_ENTITIES, NOTIFICATIONS_MIGRATIONS } from '@funding/notification-webhooks';
import type { DataSourceOptions } from 'typeorm';
import { Loan } from '../loans/loan.entity';
import { CreateLoans1764000000000 } from './1764000000000-create-loans';

/** Our one DataSource: our tables and the notification tables, our migrations and theirs, run on start. */
export function databaseOptions(url: string): DataSourceOptions {
  return {
    type: 'mysql',
    url,
    timezone: 'Z',
    charset: 'utf8mb4',
    entities: [Loan, ...NOTIFICATIONS_ENTITIES],
    migrations: [CreateLoans1764000000000, ...NOTIFICATIONS_MIGRATIONS],
    migrationsRun: true,
  };
}
