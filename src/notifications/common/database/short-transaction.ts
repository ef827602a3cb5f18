import type { DataSource, EntityManager } from 'typeorm';
import { isTransientLockError } from './database-errors';
import { isMySql } from './is-mysql';

const DEADLOCK_RETRIES = 5;

/**
 * A short transaction on rows that several instances work on at once (the delivery queue, retention).
 * On MySQL/MariaDB it runs at READ COMMITTED, so statements lock only the rows they touch (no gap
 * locks between instances), and it is retried when the server breaks a deadlock. `work` must be safe
 * to run again.
 */
export async function shortTransaction<T>(dataSource: DataSource, work: (manager: EntityManager) => Promise<T>): Promise<T> {
  if (!isMySql(dataSource)) return dataSource.transaction(work);
  for (let attempt = 1; ; attempt++) {
    try {
      return await dataSource.transaction('READ COMMITTED', work);
    } catch (error) {
      if (attempt >= DEADLOCK_RETRIES || !isTransientLockError(error)) throw error;
    }
  }
}
