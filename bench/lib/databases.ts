import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import { DataSource } from 'typeorm';
import { createMysqlDatabase } from '../../test/support/mysql-database';
import { library } from './library';

export const DEFAULT_MYSQL_URL = 'mysql://root@127.0.0.1:3306/test';

/** A fresh database for one scenario, as the service's DB_* environment. */
export interface BenchDatabase {
  readonly kind: 'mysql' | 'sqlite';
  readonly name: string;
  readonly env: Record<string, string>;
  /** Server URL with this database selected (MySQL only). */
  readonly url?: string;
  drop(): Promise<void>;
}

export interface DatabaseServer {
  readonly kind: 'mysql' | 'sqlite';
  /** Why SQLite is used, when it is. */
  readonly note?: string;
  create(label: string): Promise<BenchDatabase>;
}

/** MariaDB/MySQL at `serverUrl` when reachable; otherwise (unless `required`) SQLite files, with a note. */
export async function databaseServer(serverUrl: string, required: boolean): Promise<DatabaseServer> {
  try {
    const connection = await createConnection({ uri: serverUrl, connectTimeout: 5000 });
    await connection.query('SELECT 1');
    await connection.end();
    return mysqlServer(serverUrl);
  } catch (error) {
    const reason = `MySQL/MariaDB at ${serverUrl} is unreachable (${(error as Error).message})`;
    if (required)
      throw new Error(
        `${reason}. Start it (start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd) or set TEST_MYSQL_URL.`,
      );
    return sqliteServer(`${reason}: ran on SQLite files instead; figures are not comparable with MariaDB runs`);
  }
}

function mysqlServer(serverUrl: string): DatabaseServer {
  return {
    kind: 'mysql',
    async create(label) {
      const name = `nw_bench_${label}_${randomBytes(4).toString('hex')}`;
      const { url, drop } = await createMysqlDatabase(serverUrl, name);
      return { kind: 'mysql', name, url, env: { DB_TYPE: 'mysql', DATABASE_URL: url }, drop };
    },
  };
}

function sqliteServer(note: string): DatabaseServer {
  return {
    kind: 'sqlite',
    note,
    async create(label) {
      const dir = mkdtempSync(join(tmpdir(), `nw-bench-${label}-`));
      return {
        kind: 'sqlite',
        name: dir,
        env: { DB_TYPE: 'sqlite', DB_PATH: join(dir, 'bench.sqlite') },
        drop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  };
}

/** A DataSource of the bench's own on the scenario's database, with the library's exported entities (outside the service's process). */
export async function openDataSource(database: BenchDatabase): Promise<DataSource> {
  const { NOTIFICATIONS_ENTITIES } = library();
  const dataSource = new DataSource(
    database.kind === 'mysql'
      ? { type: 'mysql', url: database.url, entities: NOTIFICATIONS_ENTITIES, timezone: 'Z', charset: 'utf8mb4' }
      : { type: 'better-sqlite3', database: database.env.DB_PATH, entities: NOTIFICATIONS_ENTITIES, enableWAL: true },
  );
  return dataSource.initialize();
}
