import { randomBytes } from 'node:crypto';
import { DbType } from '../../src/service/config/environment-variables';
import type { DatabaseConfig } from '../../src/service/config/load-app-config';
import { createMysqlDatabase } from './mysql-database';

/** A throwaway database: SQLite in memory, or a fresh schema on the TEST_MYSQL_URL server. */
export interface TestDatabase {
  readonly config: DatabaseConfig;
  drop(): Promise<void>;
}

export interface TestDatabaseKind {
  readonly name: string;
  create(): Promise<TestDatabase>;
}

const sqlite: TestDatabaseKind = {
  name: 'sqlite',
  create: async () => ({ config: { type: DbType.sqlite, path: ':memory:' }, drop: async () => undefined }),
};

/** A fresh schema on the server, reached through one of TypeORM's two driver types for it (`mysql` or `mariadb`). */
function mysqlFamily(serverUrl: string, type: DbType.mysql | DbType.mariadb): TestDatabaseKind {
  return {
    name: type,
    async create() {
      const { url, drop } = await createMysqlDatabase(serverUrl, `nw_test_${randomBytes(6).toString('hex')}`);
      return { config: { type, url }, drop };
    },
  };
}

/**
 * Every e2e suite runs once per kind: SQLite always; when TEST_MYSQL_URL is set, the server through TypeORM's `mysql`
 * driver type and again through its `mariadb` type (hosts use either; both take the MySQL paths). Specs declare such a
 * suite with `describeEachDatabase` (each-database.ts).
 */
export const TEST_DATABASE_KINDS: readonly TestDatabaseKind[] = [
  sqlite,
  ...(process.env.TEST_MYSQL_URL
    ? [mysqlFamily(process.env.TEST_MYSQL_URL, DbType.mysql), mysqlFamily(process.env.TEST_MYSQL_URL, DbType.mariadb)]
    : []),
];
