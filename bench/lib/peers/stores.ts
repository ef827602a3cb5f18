// The peers' stores, from the scenario's side: whether the server answers (else one line saying what the scenario
// needs), a scratch place for one run, the server's processes (for CPU), how durable it is set up to be, and its
// counters (statements or commands, commits, log syncs) read before and after a run.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import type { BenchDatabase } from '../databases';
import { databaseServerPids, processPids } from '../cpu';
import { library } from '../library';

export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface PeerStore {
  /** What the peer's process connects to. */
  readonly url: string;
  /** The server's processes on this machine (none when it runs elsewhere). */
  pids(): number[];
  /** How the server keeps what it is told (its durability settings, as read from it). */
  readonly durability: Record<string, string>;
  /** Server-wide counters (another client's statements count too); a run reports their difference per delivered event. */
  counters(): Promise<Record<string, number>>;
  drop(): Promise<void>;
}

/** Throws an error of one line saying what the scenario needs, when `server` does not answer. */
async function reachable<T>(what: string, how: string, connect: () => Promise<T>): Promise<T> {
  try {
    return await connect();
  } catch (error) {
    throw new Error(`peers needs ${what} (${(error as Error).message.split('\n')[0]}); ${how}`);
  }
}

/** A scratch database on the PostgreSQL server at {@link POSTGRES_URL}, for pg-boss. */
export async function postgresStore(): Promise<PeerStore> {
  const admin = new Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 5000 });
  await reachable(`PostgreSQL at ${POSTGRES_URL}`, 'start it or set BENCH_POSTGRES_URL (docs/benchmarks.md, "Peers")', () =>
    admin.connect(),
  );
  const name = `bench_peers_${randomBytes(4).toString('hex')}`;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const settings = await admin.query<{ name: string; setting: string }>(
      "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'wal_sync_method')",
    );
    const url = new URL(POSTGRES_URL);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      pids: () => processPids(/^postgres$/),
      durability: Object.fromEntries(settings.rows.map((row) => [row.name, row.setting])),
      async counters() {
        // Backends publish their counts when idle or at exit: read after the peer has closed its pool.
        const { rows } = await admin.query<{ commits: string; syncs: string }>(
          'SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = $1) AS commits, (SELECT wal_sync FROM pg_stat_wal) AS syncs',
          [name],
        );
        return { commits: Number(rows[0].commits), walSyncs: Number(rows[0].syncs) };
      },
      async drop() {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end();
      },
    };
  } catch (error) {
    await admin.end();
    throw error;
  }
}

/** The Redis server at {@link REDIS_URL}, for BullMQ (which keeps its keys under a prefix of the run's own, removed after). */
export async function redisStore(): Promise<PeerStore> {
  const redis = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 5000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  let socketError: Error | undefined; // connect() itself rejects with "Connection is closed."
  redis.on('error', (error: Error) => (socketError = error));
  await reachable(`Redis at ${REDIS_URL}`, 'start it or set BENCH_REDIS_URL (docs/benchmarks.md, "Peers")', () =>
    redis.connect().catch((error: Error) => Promise.reject(socketError ?? error)),
  );
  const [, save] = (await redis.config('GET', 'save')) as string[];
  const [, appendonly] = (await redis.config('GET', 'appendonly')) as string[];
  const [, appendfsync] = (await redis.config('GET', 'appendfsync')) as string[];
  const stat = async (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(await redis.info('stats'))?.[1] ?? NaN);
  return {
    url: REDIS_URL,
    pids: () => processPids(/^redis-server$/),
    durability: { save: save === '' ? '"" (no snapshots)' : save, appendonly, appendfsync },
    counters: async () => ({ commands: await stat('total_commands_processed') }),
    async drop() {
      redis.disconnect();
    },
  };
}

/** A scratch MariaDB database made by our engine's own migrations (the same tables and indexes), for the floor. */
export async function floorStore(create: (label: string) => Promise<BenchDatabase>): Promise<PeerStore> {
  const database = await create('floor');
  try {
    const { NOTIFICATIONS_MIGRATIONS } = library();
    const migrator = new DataSource({
      type: 'mysql',
      url: database.url,
      migrations: NOTIFICATIONS_MIGRATIONS,
      timezone: 'Z',
      charset: 'utf8mb4',
    });
    await migrator.initialize();
    await migrator.runMigrations();
    await migrator.destroy();
  } catch (error) {
    await database.drop();
    throw error;
  }
  return { ...(await mariadbCounters(database.url!)), url: database.url!, drop: () => database.drop() };
}

/** The statement kinds counted apart (MariaDB's `Com_<kind>`): where a run's statements go. */
const STATEMENT_KINDS = ['begin', 'commit', 'select', 'insert', 'update', 'delete', 'set_option'] as const;

/** MariaDB's process, durability settings and counters, for our engine's runs and the floor's alike. */
export async function mariadbCounters(url: string): Promise<Pick<PeerStore, 'pids' | 'durability' | 'counters'>> {
  const read = async <T>(sql: string): Promise<T[]> => {
    const connection = await createConnection({ uri: url });
    try {
      const [rows] = await connection.query(sql);
      return rows as T[];
    } finally {
      await connection.end();
    }
  };
  const [durability] = await read<Record<string, string | number>>(
    'SELECT @@innodb_flush_log_at_trx_commit AS innodb_flush_log_at_trx_commit, @@sync_binlog AS sync_binlog, @@log_bin AS log_bin',
  );
  return {
    pids: databaseServerPids,
    durability: Object.fromEntries(Object.entries(durability).map(([name, value]) => [name, String(value)])),
    async counters() {
      const rows = await read<{ Variable_name: string; Value: string }>(
        `SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions', 'Innodb_data_fsyncs', ${STATEMENT_KINDS.map((kind) => `'Com_${kind}'`).join(', ')})`,
      );
      const value = (name: string) => Number(rows.find((row) => row.Variable_name === name)?.Value ?? NaN);
      return {
        statements: value('Questions'),
        ...Object.fromEntries(STATEMENT_KINDS.map((kind) => [kind, value(`Com_${kind}`)])),
        fsyncs: value('Innodb_data_fsyncs'),
      };
    },
  };
}

/** Resolves once `count` deliveries of our tables at `url` are DELIVERED (their records committed), or after `timeoutMs`. */
export async function untilDelivered(url: string, count: number, timeoutMs = 10_000): Promise<void> {
  const connection = await createConnection({ uri: url });
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const [rows] = await connection.query("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'DELIVERED'");
      if (Number((rows as { n: number | string }[])[0].n) >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await connection.end();
  }
}
