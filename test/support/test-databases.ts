import { randomBytes } from 'node:crypto';
import { DbType } from '../../src/config/environment-variables';
import type { DatabaseConfig } from '../../src/config/load-app-config';
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

function mysql(serverUrl: string): TestDatabaseKind {
  return {
    name: 'mysql',
    async create() {
      const { url, drop } = await createMysqlDatabase(serverUrl, `nw_test_${randomBytes(6).toString('hex')}`);
      return { config: { type: DbType.mysql, url }, drop };
    },
  };
}

/** Every e2e suite runs once per kind: SQLite always, MySQL/MariaDB when TEST_MYSQL_URL is set. */
export const TEST_DATABASE_KINDS: readonly TestDatabaseKind[] = [
  sqlite,
  ...(process.env.TEST_MYSQL_URL ? [mysql(process.env.TEST_MYSQL_URL)] : []),
];
