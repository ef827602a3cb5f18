import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import { DbType } from '../config/app-config';
import type { DatabaseConfig } from '../config/load-app-config';
import { NOTIFICATIONS_ENTITIES, NOTIFICATIONS_MIGRATIONS } from '../notifications/notifications.schema';

/** The one DataSource definition, shared by the service and the migrations CLI. Migrations run on start. */
export function databaseOptions(database: DatabaseConfig): DataSourceOptions {
  const common = {
    entities: NOTIFICATIONS_ENTITIES,
    migrations: NOTIFICATIONS_MIGRATIONS,
    migrationsRun: true,
    synchronize: false,
  } as const;
  if (database.type === DbType.mysql) {
    return { ...common, type: 'mysql', url: database.url, timezone: 'Z', charset: 'utf8mb4' };
  }
  if (database.path !== ':memory:') mkdirSync(dirname(database.path), { recursive: true });
  return { ...common, type: 'better-sqlite3', database: database.path, enableWAL: database.path !== ':memory:' };
}
