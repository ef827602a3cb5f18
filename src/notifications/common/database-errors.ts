import { QueryFailedError } from 'typeorm';

const UNIQUE_VIOLATION_CODES = new Set(['ER_DUP_ENTRY', 'SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY']);

/** True when a write lost a race against a unique index (MySQL/MariaDB or SQLite). */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof QueryFailedError)) return false;
  const code = (error.driverError as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && UNIQUE_VIOLATION_CODES.has(code);
}
