import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import { type EncryptionKey, type EventSchemas, type NotificationsModuleOptions, readEventSchemas } from '../../index';
import { DbType, type EnvironmentVariables, isMySqlFamily, type LogLevel, NodeEnv, validateEnvironment } from './environment-variables';
import { parseCorsOrigins } from './cors-origins';
import { ALLOW_PRIVATE_IN_PRODUCTION, type ExtraCaFile, readExtraCaFile, splitCidrs, splitDnsServers } from './webhook-trust';

/** Timeouts and pool limits of MySQL/MariaDB (DB_* variables); absent fields take the defaults of `databaseOptions`. */
export interface MysqlTuning {
  /** TCP connect and handshake of one connection, in ms. */
  readonly connectTimeoutMs?: number;
  /** Each query, in ms; 0: none. A timed-out connection is closed, not reused. */
  readonly queryTimeoutMs?: number;
  /** Connections in the pool. */
  readonly poolSize?: number;
  /** Calls that may wait for a pooled connection; beyond it they fail at once. 0: unbounded. */
  readonly poolQueueLimit?: number;
}

export type DatabaseConfig =
  | { readonly type: DbType.sqlite; readonly path: string }
  | { readonly type: DbType.mysql | DbType.mariadb; readonly url: string; readonly tuning?: MysqlTuning };

/**
 * The standalone service's configuration, read once at start: what the service itself needs, and `notifications`,
 * NotificationsModule's options as the environment sets them (AppModule passes them on as they are; the module's own
 * validation and defaults apply to them as to any host's).
 */
export interface AppConfig {
  readonly nodeEnv: NodeEnv;
  readonly port: number;
  readonly database: DatabaseConfig;
  readonly notifications: NotificationsModuleOptions;
  /** Where the extra CA (`notifications.extraCaPem`) was read from, and its certificates (for the start-up log). */
  readonly webhookExtraCa?: ExtraCaFile;
  /** Browser origins allowed by CORS; empty or absent: CORS off. */
  readonly corsOrigins?: readonly string[];
  /** Level of the JSON logs (default info). */
  readonly logLevel?: LogLevel;
  /** Bearer token GET /metrics requires; open when absent. */
  readonly metricsToken?: string;
  /** Swagger UI at /api/docs and the document at /api/docs-json (default: on, but off in production). */
  readonly apiDocs?: boolean;
  /** After a shutdown signal, how long the service keeps working with /health/ready at 503 before it drains (default 0). */
  readonly shutdownReadinessDelayMs?: number;
}

export function loadAppConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const variables = validateEnvironment(env);
  const database: DatabaseConfig = isMySqlFamily(variables.DB_TYPE)
    ? {
        type: variables.DB_TYPE,
        url: variables.DATABASE_URL!,
        tuning: {
          connectTimeoutMs: variables.DB_CONNECT_TIMEOUT_MS,
          queryTimeoutMs: variables.DB_QUERY_TIMEOUT_MS,
          poolSize: variables.DB_POOL_SIZE,
          poolQueueLimit: variables.DB_POOL_QUEUE_LIMIT,
        },
      }
    : { type: DbType.sqlite, path: variables.DB_PATH };
  const devDir = resolve(dirname(variables.DB_PATH));
  const extraCa = variables.WEBHOOK_EXTRA_CA_FILE ? readCaFile(variables.WEBHOOK_EXTRA_CA_FILE) : undefined;
  return {
    nodeEnv: variables.NODE_ENV,
    port: variables.PORT,
    database,
    notifications: {
      jwtSecret: variables.JWT_SECRET ?? developmentSecret(devDir, 'jwt-secret', 'JWT_SECRET', () => randomBytes(32).toString('base64url')),
      allowTokensWithoutExpiry: variables.JWT_ALLOW_TOKENS_WITHOUT_EXPIRY === 'true',
      maxTokenLifetimeSeconds: variables.JWT_MAX_LIFETIME_SECONDS,
      jwtIssuer: variables.JWT_ISSUER,
      jwtAudience: variables.JWT_AUDIENCE,
      production: variables.NODE_ENV === NodeEnv.production,
      encryptionKeys: parseEncryptionKeys(
        variables.SECRETS_ENCRYPTION_KEY ??
          developmentSecret(devDir, 'secrets-encryption-key', 'SECRETS_ENCRYPTION_KEY', () => `dev:${randomBytes(32).toString('base64')}`),
      ),
      serviceSite: variables.SERVICE_SITE,
      internalApiToken: variables.INTERNAL_API_TOKEN,
      allowedCidrs: splitCidrs(variables.WEBHOOK_ALLOWED_CIDRS),
      allowPrivateAddressesInProduction:
        variables.WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION === ALLOW_PRIVATE_IN_PRODUCTION.value ? ALLOW_PRIVATE_IN_PRODUCTION.value : undefined,
      extraCaPem: extraCa?.pem,
      hostResolution: { servers: splitDnsServers(variables.WEBHOOK_DNS_SERVERS), saveTimeoutMs: variables.WEBHOOK_DNS_SAVE_TIMEOUT_MS },
      rateLimits: {
        settings: { limit: variables.RATE_LIMIT_SETTINGS_PER_MINUTE, ttlMs: 60_000 },
        testSend: { limit: variables.RATE_LIMIT_TEST_SEND_PER_MINUTE, ttlMs: 60_000 },
        redeliver: { limit: variables.RATE_LIMIT_REDELIVER_PER_MINUTE, ttlMs: 60_000 },
      },
      retention: {
        deliveredDays: variables.RETENTION_DELIVERED_DAYS,
        failedDays: variables.RETENTION_FAILED_DAYS,
        idempotencyKeyHours: variables.RETENTION_IDEMPOTENCY_KEY_HOURS,
      },
      autoDisableAfterFailures: variables.WEBHOOK_AUTO_DISABLE_AFTER,
      healthFailingAfterAttempts: variables.WEBHOOK_HEALTH_FAILING_AFTER,
      delivery: {
        concurrency: variables.DELIVERY_CONCURRENCY,
        perEndpointConcurrency: variables.DELIVERY_PER_ENDPOINT_CONCURRENCY,
        circuitBreaker: { failuresToOpen: variables.DELIVERY_CIRCUIT_FAILURES, coolDownMs: variables.DELIVERY_CIRCUIT_COOL_DOWN_MS },
        batchSize: variables.DELIVERY_BATCH_SIZE,
        leaseMs: variables.DELIVERY_LEASE_MS,
        timeoutMs: variables.DELIVERY_TIMEOUT_MS,
        claimMode: variables.DELIVERY_CLAIM_MODE,
        wakeUrl: variables.DELIVERY_WAKE_URL,
      },
      publishTimeoutMs: variables.PUBLISH_TIMEOUT_MS,
      role: variables.PROCESS_ROLE,
      eventSchemas: variables.EVENT_SCHEMAS_DIR ? readSchemasDir(variables.EVENT_SCHEMAS_DIR) : undefined,
    },
    webhookExtraCa: extraCa,
    corsOrigins: parseCorsOrigins(variables.CORS_ORIGINS),
    logLevel: variables.LOG_LEVEL,
    metricsToken: variables.METRICS_TOKEN,
    shutdownReadinessDelayMs: variables.SHUTDOWN_READINESS_DELAY_MS,
    apiDocs: variables.API_DOCS === undefined ? variables.NODE_ENV !== NodeEnv.production : variables.API_DOCS === 'true',
  };
}

// Checked by validateEnvironment already; read again here, so a file that changed in between still fails with its name.
function readCaFile(path: string): ExtraCaFile {
  try {
    return readExtraCaFile(path);
  } catch (error) {
    throw new Error(`Invalid configuration:\n  - ${(error as Error).message}`);
  }
}

// Checked by validateEnvironment already; read again here, as the CA file is.
function readSchemasDir(dir: string): EventSchemas {
  try {
    return readEventSchemas(dir);
  } catch (error) {
    throw new Error(`Invalid configuration:\n  - EVENT_SCHEMAS_DIR: ${(error as Error).message}`);
  }
}

/** `[id:]<base64 key>[,…]`; a key without an id is called `default`. */
export function parseEncryptionKeys(value: string): EncryptionKey[] {
  return value.split(',').map((entry) => {
    const separator = entry.lastIndexOf(':');
    const id = separator === -1 ? 'default' : entry.slice(0, separator);
    const key = Buffer.from(entry.slice(separator + 1), 'base64');
    if (key.length !== 32) throw new Error(`Invalid configuration:\n  - SECRETS_ENCRYPTION_KEY "${id}" must decode to 32 bytes`);
    return { id, key };
  });
}

// Outside production a missing secret is generated once and kept next to the SQLite file, so
// `npm start` works from a fresh clone and tokens from `npm run token` stay valid across restarts.
function developmentSecret(dir: string, name: string, variable: keyof EnvironmentVariables, generate: () => string): string {
  const file = resolve(dir, `${name}.dev`);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dir, { recursive: true });
  const value = generate();
  writeFileSync(file, value, { mode: 0o600 });
  new Logger('Config').warn(`${variable} is not set: generated a development value in ${file}. Set ${variable} in production.`);
  return value;
}
