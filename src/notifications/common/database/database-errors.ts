import { CannotExecuteNotConnectedError, ConnectionIsNotSetError, QueryFailedError } from 'typeorm';

const UNIQUE_VIOLATION_CODES = new Set(['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);

/** True when a write lost a race against a unique index (MySQL/MariaDB or SQLite). */
export function isUniqueViolation(error: unknown): boolean {
  return hasDriverCode(error, UNIQUE_VIOLATION_CODES);
}

const FOREIGN_KEY_VIOLATION_CODES = new Set(['ER_NO_REFERENCED_ROW_2', 'ER_NO_REFERENCED_ROW', 'SQLITE_CONSTRAINT_FOREIGNKEY']);

/** True when a write referenced a row that no longer exists (MySQL/MariaDB or SQLite). */
export function isForeignKeyViolation(error: unknown): boolean {
  return hasDriverCode(error, FOREIGN_KEY_VIOLATION_CODES);
}

const TRANSIENT_LOCK_CODES = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'SQLITE_BUSY']);

/** True when the database rolled the transaction back to break a deadlock or a lock wait; retrying it is safe. */
export function isTransientLockError(error: unknown): boolean {
  return hasDriverCode(error, TRANSIENT_LOCK_CODES);
}

function hasDriverCode(error: unknown, codes: ReadonlySet<string>): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const code = (error.driverError as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && codes.has(code);
}

// Driver codes meaning "the database cannot be reached or did not answer in time", or a lock conflict a
// retry resolves: none says anything about the request, so the caller should retry later.
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR',
  'ER_SERVER_SHUTDOWN',
  'ER_LOCK_DEADLOCK',
  'ER_LOCK_WAIT_TIMEOUT',
]);
// mysql2's pool and connection errors, and better-sqlite3's closed database, which carry no code.
const UNAVAILABLE_MESSAGES = new Set([
  'Pool is closed.',
  'Queue limit reached.',
  'No connections available.',
  "Can't add new command when connection is in closed state",
  'The database connection is not open',
]);
// TypeORM's MySQL driver once its pool is closed (a plain TypeORMError).
const NOT_CONNECTED_MESSAGE = /^Connection is not established with \w+ database$/;

/**
 * True when an error says the database is down, unreachable, hanging (a connect or query timeout) or busy
 * (SQLite busy, a lock wait or deadlock), as opposed to a bug or bad data: worth a 503 and a retry. Looks
 * through TypeORM's QueryFailedError to the driver's error, and down `cause` chains.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current: unknown = error, depth = 0; current !== null && typeof current === 'object' && depth < 5; depth++) {
    const { code, message, fatal } = current as { code?: unknown; message?: unknown; fatal?: unknown };
    if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_BUSY'))) return true;
    if (typeof message === 'string' && (UNAVAILABLE_MESSAGES.has(message) || NOT_CONNECTED_MESSAGE.test(message))) return true;
    // TypeORM's errors for a DataSource that is not (or no longer) connected.
    if (current instanceof ConnectionIsNotSetError || current instanceof CannotExecuteNotConnectedError) return true;
    // mysql2 marks the errors that lost the connection (network errors, protocol breakage) as fatal.
    if (fatal === true) return true;
    current = current instanceof QueryFailedError ? current.driverError : (current as { cause?: unknown }).cause;
  }
  return false;
}
