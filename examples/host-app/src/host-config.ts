import type { NotificationsModuleOptions } from '@funding/notification-webhooks';

export interface HostConfig {
  /** mysql://user:password@host:3306/database */
  readonly databaseUrl: string;
  /** 32 bytes that encrypt webhook signing secrets at rest. */
  readonly webhookSecretsKey: Buffer;
  /** Tests only: `notificationsTestOptions(...)` from the testing kit (loopback receiver, test clock). */
  readonly notificationsForTests?: Partial<NotificationsModuleOptions>;
}

/** Why this example refuses to run in production: its authentication is a stand-in. */
export const NOT_FOR_PRODUCTION =
  'examples/host-app is an example and refuses NODE_ENV=production: it trusts the x-user-id header (src/auth/auth.service.ts), ' +
  'so anyone who reaches it can act as any user. Authenticate users yourself before you run anything like it.';

export function hostConfigFromEnv(env: NodeJS.ProcessEnv = process.env): HostConfig {
  if (env.NODE_ENV === 'production') throw new Error(NOT_FOR_PRODUCTION);
  const { DATABASE_URL, WEBHOOK_SECRETS_KEY } = env;
  if (!DATABASE_URL) throw new Error('DATABASE_URL is required (mysql://user:password@host:3306/database)');
  const key = Buffer.from(WEBHOOK_SECRETS_KEY ?? '', 'base64');
  if (key.length !== 32) throw new Error('WEBHOOK_SECRETS_KEY must be 32 bytes in base64 (openssl rand -base64 32)');
  return { databaseUrl: DATABASE_URL, webhookSecretsKey: key };
}
