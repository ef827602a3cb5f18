import type { EntityManager } from 'typeorm';

/**
 * What the outbox's tables share: their statements are written out, not built, since they run for every event and every
 * attempt (TypeORM's insert builder cost more CPU than the database did: it re-scans every parameter of a 500-row
 * statement).
 */

/** Rows per INSERT (and ids per statement where a list of ids goes into one). */
export const INSERT_CHUNK = 500;

/** `?, ?, …`: one placeholder per value. */
export function placeholders(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}

/** At most `max` characters, the last an ellipsis when cut (the columns' length). */
export function truncate(text: string | null, max: number): string | null {
  return text !== null && text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Multi-row INSERTs, {@link INSERT_CHUNK} rows each; resolves with the driver's answer to the last one. */
export async function insertRows(
  manager: EntityManager,
  table: string,
  columns: readonly string[],
  rows: readonly unknown[][],
): Promise<unknown> {
  const row = `(${placeholders(columns.length)})`;
  let last: unknown;
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    last = await manager.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${chunk.map(() => row).join(', ')}`, chunk.flat());
  }
  return last;
}

/**
 * The id a single-row INSERT generated, from the driver's answer: mysql2's `insertId`, better-sqlite3's `lastInsertRowid`;
 * null when the answer is neither (another driver: the caller reads the row back instead).
 */
export function insertIdOf(raw: unknown): number | null {
  const id = typeof raw === 'object' && raw !== null && 'insertId' in raw ? (raw as { insertId: unknown }).insertId : raw;
  const value = typeof id === 'bigint' ? Number(id) : id;
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}
