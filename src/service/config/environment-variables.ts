import { plainToInstance, Transform } from 'class-transformer';
import { Equals, IsEnum, IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, Max, Min, MinLength, validateSync } from 'class-validator';
import {
  CLAIM_MODES,
  type ClaimMode,
  DEFAULT_IDEMPOTENCY_KEY_HOURS,
  DEFAULT_LEASE_MS,
  DEFAULT_FAILING_AFTER_ATTEMPTS,
  DEFAULT_RATE_LIMITS,
  DEFAULT_RETENTION,
  DEFAULT_WEBHOOK_TIMEOUT_MS,
  LEASE_MARGIN_MS,
  PROCESS_ROLES,
  type ProcessRole,
  readEventSchemas,
} from '../../index';
import {
  ALLOW_PRIVATE_IN_PRODUCTION,
  allowedCidrsProblem,
  METRICS_OPEN_IN_PRODUCTION,
  readExtraCaFile,
  webhookDnsServersProblem,
} from './webhook-trust';

export enum NodeEnv {
  development = 'development',
  production = 'production',
  test = 'test',
}

export enum DbType {
  sqlite = 'sqlite',
  mysql = 'mysql',
  /** TypeORM's `mariadb` driver type: the same server family and SQL as `mysql`. */
  mariadb = 'mariadb',
}

/** MySQL or MariaDB, whichever TypeORM driver type names it. */
export function isMySqlFamily(type: DbType): type is DbType.mysql | DbType.mariadb {
  return type === DbType.mysql || type === DbType.mariadb;
}

export enum LogLevel {
  fatal = 'fatal',
  error = 'error',
  warn = 'warn',
  info = 'info',
  debug = 'debug',
  trace = 'trace',
  silent = 'silent',
}

/** A whole number from `min` (to `max`), given as text; one message, naming the variable, for every way it can be wrong. */
function WholeNumber(min: number, max?: number): PropertyDecorator {
  return (target, property) => {
    const message =
      max === undefined
        ? `${String(property)} must be a whole number of at least ${min}`
        : `${String(property)} must be an integer from ${min} to ${max}`;
    const decorators = [Transform(({ value }) => Number(value)), IsInt({ message }), Min(min, { message })];
    if (max !== undefined) decorators.push(Max(max, { message }));
    for (const decorate of decorators) decorate(target, property);
  };
}

/** The environment variables of the standalone service; `.env.example` documents each one. */
export class EnvironmentVariables {
  @IsEnum(NodeEnv)
  NODE_ENV: NodeEnv = NodeEnv.development;

  @WholeNumber(1, 65535)
  PORT = 3000;

  @IsEnum(DbType)
  DB_TYPE: DbType = DbType.sqlite;

  @IsString()
  DB_PATH = './data/notifications.sqlite';

  @IsOptional()
  @Matches(/^mysql:\/\/.+/, { message: 'DATABASE_URL must be a mysql:// URL' })
  DATABASE_URL?: string;

  @IsOptional()
  @WholeNumber(100, 60_000)
  DB_CONNECT_TIMEOUT_MS?: number;

  @IsOptional()
  @WholeNumber(0, 3_600_000)
  DB_QUERY_TIMEOUT_MS?: number;

  @IsOptional()
  @WholeNumber(1, 1000)
  DB_POOL_SIZE?: number;

  @IsOptional()
  @WholeNumber(0, 1_000_000)
  DB_POOL_QUEUE_LIMIT?: number;

  @IsOptional()
  @WholeNumber(100, 60_000)
  PUBLISH_TIMEOUT_MS?: number;

  @IsOptional()
  @MinLength(32, { message: 'JWT_SECRET must be at least 32 characters' })
  JWT_SECRET?: string;

  @IsOptional()
  @IsIn(['true', 'false'], { message: 'JWT_ALLOW_TOKENS_WITHOUT_EXPIRY must be true or false' })
  JWT_ALLOW_TOKENS_WITHOUT_EXPIRY?: string;

  @IsOptional()
  @WholeNumber(60, 31_536_000)
  JWT_MAX_LIFETIME_SECONDS?: number;

  @IsOptional()
  @IsString()
  JWT_ISSUER?: string;

  @IsOptional()
  @IsString()
  JWT_AUDIENCE?: string;

  @IsOptional()
  @Matches(/^([A-Za-z0-9_-]{1,32}:)?[A-Za-z0-9+/=_-]{43,44}(,([A-Za-z0-9_-]{1,32}:)?[A-Za-z0-9+/=_-]{43,44})*$/, {
    message: 'SECRETS_ENCRYPTION_KEY must be "[id:]<32 bytes in base64>", comma-separated for several keys',
  })
  SECRETS_ENCRYPTION_KEY?: string;

  @IsOptional()
  @MinLength(32, { message: 'INTERNAL_API_TOKEN must be at least 32 characters' })
  INTERNAL_API_TOKEN?: string;

  @IsOptional()
  @IsString()
  WEBHOOK_ALLOWED_CIDRS?: string;

  @IsOptional()
  @Equals(ALLOW_PRIVATE_IN_PRODUCTION.value, {
    message: `${ALLOW_PRIVATE_IN_PRODUCTION.variable} must be unset or exactly "${ALLOW_PRIVATE_IN_PRODUCTION.value}"`,
  })
  WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION?: string;

  @IsOptional()
  @IsString()
  WEBHOOK_EXTRA_CA_FILE?: string;

  @IsOptional()
  @IsString()
  WEBHOOK_DNS_SERVERS?: string;

  @IsOptional()
  @WholeNumber(100, 10_000)
  WEBHOOK_DNS_SAVE_TIMEOUT_MS?: number;

  @IsUrl({ protocols: ['https', 'http'], require_tld: false }, { message: 'SERVICE_SITE must be an http(s) URL' })
  SERVICE_SITE = 'https://funding.example.com';

  @IsOptional()
  @IsString()
  CORS_ORIGINS?: string;

  @WholeNumber(1)
  RATE_LIMIT_SETTINGS_PER_MINUTE = DEFAULT_RATE_LIMITS.settings.limit;

  @WholeNumber(1)
  RATE_LIMIT_TEST_SEND_PER_MINUTE = DEFAULT_RATE_LIMITS.testSend.limit;

  @WholeNumber(1)
  RATE_LIMIT_REDELIVER_PER_MINUTE = DEFAULT_RATE_LIMITS.redeliver.limit;

  @IsEnum(LogLevel, { message: `LOG_LEVEL must be one of ${Object.values(LogLevel).join(', ')}` })
  LOG_LEVEL: LogLevel = LogLevel.info;

  @IsOptional()
  @MinLength(32, { message: 'METRICS_TOKEN must be at least 32 characters' })
  METRICS_TOKEN?: string;

  @IsOptional()
  @Equals(METRICS_OPEN_IN_PRODUCTION.value, {
    message: `${METRICS_OPEN_IN_PRODUCTION.variable} must be unset or exactly "${METRICS_OPEN_IN_PRODUCTION.value}"`,
  })
  METRICS_OPEN_IN_PRODUCTION?: string;

  @WholeNumber(0, 60_000)
  SHUTDOWN_READINESS_DELAY_MS = 0;

  @IsOptional()
  @IsIn(['true', 'false'], { message: 'API_DOCS must be true or false' })
  API_DOCS?: string;

  @WholeNumber(1)
  RETENTION_DELIVERED_DAYS = DEFAULT_RETENTION.deliveredDays;

  @WholeNumber(1)
  RETENTION_FAILED_DAYS = DEFAULT_RETENTION.failedDays;

  @WholeNumber(1, 8760)
  RETENTION_IDEMPOTENCY_KEY_HOURS = DEFAULT_IDEMPOTENCY_KEY_HOURS;

  @WholeNumber(0)
  WEBHOOK_AUTO_DISABLE_AFTER = 0;

  @WholeNumber(1)
  WEBHOOK_HEALTH_FAILING_AFTER = DEFAULT_FAILING_AFTER_ATTEMPTS;

  @IsOptional()
  @WholeNumber(1, 1024)
  DELIVERY_CONCURRENCY?: number;

  @IsOptional()
  @WholeNumber(1, 1024)
  DELIVERY_PER_ENDPOINT_CONCURRENCY?: number;

  @IsOptional()
  @WholeNumber(0, 1000)
  DELIVERY_CIRCUIT_FAILURES?: number;

  @IsOptional()
  @WholeNumber(1000, 3_600_000)
  DELIVERY_CIRCUIT_COOL_DOWN_MS?: number;

  @IsOptional()
  @WholeNumber(1, 10_000)
  DELIVERY_BATCH_SIZE?: number;

  @IsOptional()
  @WholeNumber(1000, 3_600_000)
  DELIVERY_LEASE_MS?: number;

  @IsOptional()
  @WholeNumber(100, 60_000)
  DELIVERY_TIMEOUT_MS?: number;

  @IsOptional()
  @IsIn(CLAIM_MODES, { message: `DELIVERY_CLAIM_MODE must be one of ${CLAIM_MODES.join(', ')}` })
  DELIVERY_CLAIM_MODE?: ClaimMode;

  @IsOptional()
  @IsUrl(
    { protocols: ['https', 'http'], require_tld: false, require_protocol: true },
    { message: 'DELIVERY_WAKE_URL must be an http(s) URL' },
  )
  DELIVERY_WAKE_URL?: string;

  @IsIn(PROCESS_ROLES, { message: `PROCESS_ROLE must be one of ${PROCESS_ROLES.join(', ')}` })
  PROCESS_ROLE: ProcessRole = 'all';

  @IsOptional()
  @IsString()
  EVENT_SCHEMAS_DIR?: string;
}

/** Parses and validates the environment; throws one error naming every bad variable, one line each. */
export function validateEnvironment(env: NodeJS.ProcessEnv): EnvironmentVariables {
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''));
  const variables = plainToInstance(EnvironmentVariables, given, { exposeDefaultValues: true });
  const errors = validateSync(variables, { skipMissingProperties: false });
  // One line per variable: a value can break several constraints (`PORT=abc` is not an integer, not ≥ 1, not ≤ 65535).
  const problems = errors.flatMap((error) => Object.values(error.constraints ?? {}).slice(0, 1));
  const production = variables.NODE_ENV === NodeEnv.production;
  const cidrsProblem = allowedCidrsProblem(
    variables.WEBHOOK_ALLOWED_CIDRS,
    production,
    variables.WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION === ALLOW_PRIVATE_IN_PRODUCTION.value,
  );
  if (cidrsProblem !== null) problems.push(cidrsProblem);
  if (variables.WEBHOOK_EXTRA_CA_FILE) {
    try {
      readExtraCaFile(variables.WEBHOOK_EXTRA_CA_FILE);
    } catch (error) {
      problems.push((error as Error).message);
    }
  }
  if (variables.EVENT_SCHEMAS_DIR) {
    try {
      readEventSchemas(variables.EVENT_SCHEMAS_DIR);
    } catch (error) {
      problems.push(`EVENT_SCHEMAS_DIR: ${(error as Error).message}`);
    }
  }
  const dnsServersProblem = webhookDnsServersProblem(variables.WEBHOOK_DNS_SERVERS);
  if (dnsServersProblem !== null) problems.push(dnsServersProblem);
  if (isMySqlFamily(variables.DB_TYPE) && !variables.DATABASE_URL)
    problems.push(`DATABASE_URL is required when DB_TYPE=${variables.DB_TYPE}`);
  // A lease that ends before the attempt's deadline would let another instance send the same attempt again.
  const timeoutMs = variables.DELIVERY_TIMEOUT_MS ?? DEFAULT_WEBHOOK_TIMEOUT_MS;
  const leaseMs = variables.DELIVERY_LEASE_MS ?? DEFAULT_LEASE_MS;
  if (leaseMs <= timeoutMs + LEASE_MARGIN_MS) {
    problems.push(
      `DELIVERY_LEASE_MS (${leaseMs}) must exceed DELIVERY_TIMEOUT_MS (${timeoutMs}) by more than ${LEASE_MARGIN_MS} ms (record budget and tolerated clock skew)`,
    );
  }
  if (variables.NODE_ENV === NodeEnv.production) {
    if (!variables.JWT_SECRET) problems.push('JWT_SECRET is required when NODE_ENV=production');
    // Without them any HS256 token signed with JWT_SECRET (a password-reset link, say) opens the settings API.
    if (!variables.JWT_ISSUER) problems.push('JWT_ISSUER is required when NODE_ENV=production (the iss claim user tokens must carry)');
    if (!variables.JWT_AUDIENCE) problems.push('JWT_AUDIENCE is required when NODE_ENV=production (the aud claim user tokens must carry)');
    if (!variables.SECRETS_ENCRYPTION_KEY) problems.push('SECRETS_ENCRYPTION_KEY is required when NODE_ENV=production');
    // Anyone who reaches an open /metrics reads the service's internals and makes it count its queue.
    if (!variables.METRICS_TOKEN && variables.METRICS_OPEN_IN_PRODUCTION !== METRICS_OPEN_IN_PRODUCTION.value) {
      problems.push(
        `METRICS_TOKEN is required when NODE_ENV=production (or set ${METRICS_OPEN_IN_PRODUCTION.variable}=${METRICS_OPEN_IN_PRODUCTION.value} if /metrics is unreachable from outside)`,
      );
    }
  }
  if (problems.length > 0) throw new Error(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  return variables;
}
