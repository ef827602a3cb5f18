import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DbType } from '../../src/service/config/environment-variables';
import type { TestDatabase, TestDatabaseKind } from './test-databases';

/** A database that outlives one connection: a file for SQLite (the in-memory kind would vanish), a fresh schema for MySQL. */
export async function persistentDatabase(kind: TestDatabaseKind): Promise<TestDatabase> {
  if (kind.name !== 'sqlite') return kind.create();
  const dir = mkdtempSync(join(tmpdir(), 'notifications-db-'));
  return {
    config: { type: DbType.sqlite, path: join(dir, 'notifications.sqlite') },
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  };
}
