import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Logger } from '@nestjs/common';
import type { EncryptionKey } from '../notifications/notifications-options.interface';
import { DbType, type EnvironmentVariables, NodeEnv, validateEnvironment } from './app-config';

export type DatabaseConfig = { readonly type: DbType.sqlite; readonly path: string } | { readonly type: DbType.mysql; readonly url: string };

/** The standalone service's configuration, read once at start. */
export interface AppConfig {
  readonly nodeEnv: NodeEnv;
  readonly port: number;
  readonly database: DatabaseConfig;
  readonly jwtSecret: string;
  readonly encryptionKeys: readonly EncryptionKey[];
  readonly serviceSite: string;
  readonly internalApiToken?: string;
  readonly webhookAllowedCidrs: readonly string[];
  readonly webhookExtraCaPem?: string;
}

export function loadAppConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const variables = validateEnvironment(env);
  const database: DatabaseConfig =
    variables.DB_TYPE === DbType.mysql
      ? { type: DbType.mysql, url: variables.DATABASE_URL! }
      : { type: DbType.sqlite, path: variables.DB_PATH };
  const devDir = resolve(dirname(variables.DB_PATH));
  return {
    nodeEnv: variables.NODE_ENV,
    port: variables.PORT,
    database,
    jwtSecret: variables.JWT_SECRET ?? developmentSecret(devDir, 'jwt-secret', 'JWT_SECRET', () => randomBytes(32).toString('base64url')),
    encryptionKeys: parseEncryptionKeys(
      variables.SECRETS_ENCRYPTION_KEY ??
        developmentSecret(devDir, 'secrets-encryption-key', 'SECRETS_ENCRYPTION_KEY', () => `dev:${randomBytes(32).toString('base64')}`),
    ),
    serviceSite: variables.SERVICE_SITE,
    internalApiToken: variables.INTERNAL_API_TOKEN,
    webhookAllowedCidrs: (variables.WEBHOOK_ALLOWED_CIDRS ?? '').split(',').map((c) => c.trim()).filter(Boolean),
    webhookExtraCaPem: variables.WEBHOOK_EXTRA_CA_FILE ? readCaFile(variables.WEBHOOK_EXTRA_CA_FILE) : undefined,
  };
}

function readCaFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`Invalid configuration:\n  - WEBHOOK_EXTRA_CA_FILE cannot be read: ${(error as Error).message}`);
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
