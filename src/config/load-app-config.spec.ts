import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAppConfig, parseEncryptionKeys } from './load-app-config';

const KEY = Buffer.alloc(32, 7).toString('base64');

describe('loadAppConfig', () => {
  const dataDir = () => mkdtempSync(join(tmpdir(), 'nw-config-'));

  it('runs on defaults: SQLite under ./data and generated development secrets kept across starts', () => {
    const dir = dataDir();
    const env = { DB_PATH: join(dir, 'db.sqlite') };
    const first = loadAppConfig(env);
    expect(first).toMatchObject({ port: 3000, nodeEnv: 'development', database: { type: 'sqlite', path: env.DB_PATH } });
    expect(first.encryptionKeys[0].key).toHaveLength(32);
    expect(readFileSync(join(dir, 'jwt-secret.dev'), 'utf8')).toBe(first.jwtSecret);
    expect(loadAppConfig(env)).toEqual(first);
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DB_TYPE: 'postgres' }, 'DB_TYPE'],
    [{ DB_TYPE: 'mysql' }, 'DATABASE_URL is required'],
    [{ DATABASE_URL: 'postgres://x' }, 'DATABASE_URL'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV'],
    [{ JWT_SECRET: 'short' }, 'JWT_SECRET'],
    [{ SECRETS_ENCRYPTION_KEY: 'not-a-key' }, 'SECRETS_ENCRYPTION_KEY'],
    [{ SERVICE_SITE: 'not a url' }, 'SERVICE_SITE'],
    [{ DELIVERY_CONCURRENCY: '0' }, 'DELIVERY_CONCURRENCY'],
    [{ DELIVERY_BATCH_SIZE: 'many' }, 'DELIVERY_BATCH_SIZE'],
    [{ DELIVERY_PER_ENDPOINT_CONCURRENCY: '0' }, 'DELIVERY_PER_ENDPOINT_CONCURRENCY'],
    [{ DELIVERY_CIRCUIT_FAILURES: '-1' }, 'DELIVERY_CIRCUIT_FAILURES'],
    [{ DELIVERY_CIRCUIT_COOL_DOWN_MS: '10' }, 'DELIVERY_CIRCUIT_COOL_DOWN_MS'],
    [{ DELIVERY_TIMEOUT_MS: '50' }, 'DELIVERY_TIMEOUT_MS'],
    [{ DB_CONNECT_TIMEOUT_MS: '10' }, 'DB_CONNECT_TIMEOUT_MS must be an integer from 100 to 60000'],
    [{ DB_QUERY_TIMEOUT_MS: '-1' }, 'DB_QUERY_TIMEOUT_MS'],
    [{ DB_POOL_SIZE: '0' }, 'DB_POOL_SIZE'],
    [{ DB_POOL_QUEUE_LIMIT: 'lots' }, 'DB_POOL_QUEUE_LIMIT'],
    [{ PUBLISH_TIMEOUT_MS: '70000' }, 'PUBLISH_TIMEOUT_MS must be an integer from 100 to 60000'],
    [{ DELIVERY_LEASE_MS: '4000' }, 'DELIVERY_LEASE_MS (4000) must exceed DELIVERY_TIMEOUT_MS (5000) by more than 1000 ms'],
    [{ DELIVERY_TIMEOUT_MS: '60000' }, 'DELIVERY_LEASE_MS (60000) must exceed DELIVERY_TIMEOUT_MS (60000) by more than 1000 ms'],
    [{ NODE_ENV: 'production', SECRETS_ENCRYPTION_KEY: KEY }, 'JWT_SECRET is required when NODE_ENV=production'],
    [{ NODE_ENV: 'production', JWT_SECRET: 'j'.repeat(32) }, 'SECRETS_ENCRYPTION_KEY is required when NODE_ENV=production'],
  ])('refuses %j naming %s', (env, variable) => {
    expect(() => loadAppConfig({ DB_PATH: join(dataDir(), 'db.sqlite'), ...env })).toThrow(variable);
  });

  it('reads a production configuration', () => {
    const config = loadAppConfig({
      NODE_ENV: 'production',
      PORT: '8080',
      DB_TYPE: 'mysql',
      DATABASE_URL: 'mysql://app:pw@db:3306/notifications',
      JWT_SECRET: 'j'.repeat(32),
      SECRETS_ENCRYPTION_KEY: `k2:${KEY},k1:${Buffer.alloc(32, 1).toString('base64')}`,
    });
    expect(config.port).toBe(8080);
    expect(config.database).toEqual({ type: 'mysql', url: 'mysql://app:pw@db:3306/notifications', tuning: {} });
    expect(config.encryptionKeys.map((k) => k.id)).toEqual(['k2', 'k1']);
  });

  it('reads the database timeouts, pool limits and publish deadline', () => {
    const config = loadAppConfig({
      DB_TYPE: 'mysql',
      DB_PATH: join(dataDir(), 'db.sqlite'),
      DATABASE_URL: 'mysql://app:pw@db:3306/notifications',
      DB_CONNECT_TIMEOUT_MS: '2000',
      DB_QUERY_TIMEOUT_MS: '0',
      DB_POOL_SIZE: '20',
      DB_POOL_QUEUE_LIMIT: '50',
      PUBLISH_TIMEOUT_MS: '3000',
    });
    expect(config.database).toEqual({
      type: 'mysql',
      url: 'mysql://app:pw@db:3306/notifications',
      tuning: { connectTimeoutMs: 2000, queryTimeoutMs: 0, poolSize: 20, poolQueueLimit: 50 },
    });
    expect(config.publishTimeoutMs).toBe(3000);
  });

  it('reads the delivery tuning, leaving what is unset to the module defaults', () => {
    const dir = dataDir();
    const env = {
      DB_PATH: join(dir, 'db.sqlite'),
      DELIVERY_CONCURRENCY: '128',
      DELIVERY_PER_ENDPOINT_CONCURRENCY: '8',
      DELIVERY_CIRCUIT_FAILURES: '0',
      DELIVERY_LEASE_MS: '10000',
      DELIVERY_TIMEOUT_MS: '2000',
    };
    expect(loadAppConfig(env).delivery).toEqual({
      concurrency: 128,
      perEndpointConcurrency: 8,
      circuitBreaker: { failuresToOpen: 0, coolDownMs: undefined },
      batchSize: undefined,
      leaseMs: 10_000,
      timeoutMs: 2000,
    });
  });

  it('names a key that does not decode to 32 bytes', () => {
    expect(() => parseEncryptionKeys(`short:${Buffer.alloc(31).toString('base64')}A`)).toThrow('"short" must decode to 32 bytes');
  });
});
