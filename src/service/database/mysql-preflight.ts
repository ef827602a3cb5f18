import { createConnection } from 'mysql2/promise';

/** The database cannot be used; `message` is one line that says what to do (never the password). */
export class DatabaseNotReadyError extends Error {}

export interface MysqlPreflightOptions {
  readonly connectTimeoutMs: number;
  /** Create the database named in the URL when it does not exist (the service allows it outside production). */
  readonly createIfMissing: boolean;
}

/**
 * Connects once to the database named in `url` before the service starts, so that a wrong address, wrong
 * credentials or a missing database stop the start at once with one actionable line, instead of TypeORM's
 * retries. Resolves with whether it created the database.
 */
export async function preflightMysql(url: string, options: MysqlPreflightOptions): Promise<{ created: boolean }> {
  const target = describe(url);
  try {
    await connectAndClose(url, options.connectTimeoutMs);
    return { created: false };
  } catch (error) {
    if (codeOf(error) !== 'ER_BAD_DB_ERROR') throw new DatabaseNotReadyError(explain(error, target, options.connectTimeoutMs));
  }
  const createIt = `CREATE DATABASE \`${target.database}\` CHARACTER SET utf8mb4`;
  if (!options.createIfMissing) {
    throw new DatabaseNotReadyError(
      `Database "${target.database}" does not exist on ${target.server}: create it (${createIt}) or fix the name in DATABASE_URL; with NODE_ENV=production the service never creates it`,
    );
  }
  const server = new URL(url);
  server.pathname = '/';
  const connection = await createConnection({ uri: server.toString(), connectTimeout: options.connectTimeoutMs });
  try {
    await connection.query(`CREATE DATABASE IF NOT EXISTS \`${target.database}\` CHARACTER SET utf8mb4`);
  } catch (error) {
    throw new DatabaseNotReadyError(
      `Database "${target.database}" does not exist on ${target.server} and user "${target.user}" may not create it (${codeOf(error)}): have an administrator run ${createIt}, or fix DATABASE_URL`,
    );
  } finally {
    await connection.end();
  }
  return { created: true };
}

interface Target {
  readonly server: string;
  readonly database: string;
  readonly user: string;
}

function describe(url: string): Target {
  const parsed = new URL(url);
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  if (!database || database.includes('`') || database.includes('/')) {
    throw new DatabaseNotReadyError(
      `DATABASE_URL must name one database after the host, e.g. mysql://user:password@host:3306/notifications`,
    );
  }
  return { server: `${parsed.hostname}:${parsed.port || '3306'}`, database, user: decodeURIComponent(parsed.username) };
}

async function connectAndClose(url: string, connectTimeoutMs: number): Promise<void> {
  const connection = await createConnection({ uri: url, connectTimeout: connectTimeoutMs });
  await connection.end();
}

function explain(error: unknown, { server, database, user }: Target, connectTimeoutMs: number): string {
  const code = codeOf(error);
  switch (code) {
    case 'ECONNREFUSED':
      return `Cannot connect to MySQL/MariaDB at ${server} (connection refused): start the server, or fix the host and port in DATABASE_URL`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Cannot resolve the host of DATABASE_URL (${server}, ${code}): fix the host name`;
    case 'ETIMEDOUT':
      return `No answer from MySQL/MariaDB at ${server} within ${connectTimeoutMs} ms (DB_CONNECT_TIMEOUT_MS): check the host, the port and the firewall`;
    case 'ER_ACCESS_DENIED_ERROR':
    case 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR':
      return `MySQL/MariaDB at ${server} refused user "${user}" (access denied): fix the user and password in DATABASE_URL`;
    case 'ER_DBACCESS_DENIED_ERROR':
      return `User "${user}" may not use database "${database}" on ${server}: grant it (GRANT ALL ON \`${database}\`.* TO ...) or fix DATABASE_URL`;
    default:
      return `Cannot connect to MySQL/MariaDB at ${server} (${code ?? 'error'}): ${(error as Error).message}`;
  }
}

function codeOf(error: unknown): string | undefined {
  return (error as { code?: string }).code;
}
