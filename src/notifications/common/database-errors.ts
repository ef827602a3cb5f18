import { QueryFailedError } from 'typeorm';

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
