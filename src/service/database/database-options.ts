import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { DataSourceOptions } from 'typeorm';
import { DbType } from '../config/environment-variables';
import type { DatabaseConfig, MysqlTuning } from '../config/load-app-config';
import { NOTIFICATIONS_ENTITIES, NOTIFICATIONS_MIGRATIONS } from '../../index';
import { DropTimedOutConnections } from './drop-timed-out-connections.subscriber';

/**
 * How long MySQL/MariaDB may take before the driver gives up, so a database that hangs (process stopped,
 * packets dropped) fails calls instead of holding them forever. The request path has its own, shorter,
 * deadline (`PUBLISH_TIMEOUT_MS`); these bound everything else and free the pool.
 */
export const DEFAULT_MYSQL_TUNING: Required<MysqlTuning> = {
  // TCP connect plus handshake (mysql2's default is 10 s); a healthy server answers in milliseconds.
  connectTimeoutMs: 5_000,
  // Longer than any statement of the service (batches of at most a few thousand rows); 0 turns it off.
  queryTimeoutMs: 30_000,
  poolSize: 10,
  // Calls waiting for a pooled connection beyond this fail at once ("Queue limit reached.") instead of queuing in memory.
  poolQueueLimit: 1_000,
};

/** The one DataSource definition, shared by the service and the migrations CLI. Migrations run on start. */
export function databaseOptions(database: DatabaseConfig): DataSourceOptions {
  const common = {
    entities: NOTIFICATIONS_ENTITIES,
    migrations: NOTIFICATIONS_MIGRATIONS,
    migrationsRun: true,
    synchronize: false,
  } as const;
  if (database.type !== DbType.sqlite) {
    const tuning = { ...DEFAULT_MYSQL_TUNING, ...definedOnly(database.tuning ?? {}) };
    return {
      ...common,
      type: database.type,
      url: database.url,
      timezone: 'Z',
      charset: 'utf8mb4',
      connectTimeout: tuning.connectTimeoutMs,
      // mysql2 captures a stack trace for every query by default (to give its errors the caller's frames): about 7 % of the
      // service's CPU for a lone event in the bench's profile. Errors keep their message, code and mysql2's own frames.
      trace: false,
      poolSize: tuning.poolSize,
      // TypeORM passes maxQueryExecutionTime to mysql2 as each query's `timeout` when enableQueryTimeout is set
      // (it also logs slower queries, but only when TypeORM logging is on, which the service never turns on).
      ...(tuning.queryTimeoutMs > 0 ? { enableQueryTimeout: true, maxQueryExecutionTime: tuning.queryTimeoutMs } : {}),
      subscribers: tuning.queryTimeoutMs > 0 ? [DropTimedOutConnections] : [],
      // mysql2 pool options TypeORM does not name; mysql2 has no acquire timeout (TypeORM's acquireTimeout is ignored by it).
      extra: { queueLimit: tuning.poolQueueLimit },
    };
  }
  if (database.path !== ':memory:') mkdirSync(dirname(database.path), { recursive: true });
  return { ...common, type: 'better-sqlite3', database: database.path, enableWAL: database.path !== ':memory:' };
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
