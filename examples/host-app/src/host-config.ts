import type { NotificationsModuleOptions } from '@funding/notification-webhooks';

export interface HostConfig {
  /** mysql://user:password@host:3306/database */
  readonly databaseUrl: string;
  /** 32 bytes that encrypt webhook signing secrets at rest. */
  readonly webhookSecretsKey: Buffer;
  /** Tests only: `notificationsTestOptions(...)` from the testing kit (loopback receiver, test clock). */
  readonly notificationsForTests?: Partial<NotificationsModuleOptions>;
}

export function hostConfigFromEnv(env: NodeJS.ProcessEnv = process.env): HostConfig {
  const { DATABASE_URL, WEBHOOK_SECRETS_KEY } = env;
  if (!DATABASE_URL) throw new Error('DATABASE_URL is required (mysql://user:password@host:3306/database)');
  const key = Buffer.from(WEBHOOK_SECRETS_KEY ?? '', 'base64');
  if (key.length !== 32) throw new Error('WEBHOOK_SECRETS_KEY must be 32 bytes in base64 (openssl rand -base64 32)');
  return { databaseUrl: DATABASE_URL, webhookSecretsKey: key };
}
