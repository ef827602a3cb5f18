import type { DataSource } from 'typeorm';

/** True on MySQL/MariaDB (TypeORM's `mysql` driver), where the queue takes row locks (SKIP LOCKED, FOR UPDATE) and READ COMMITTED. */
export function isMySql(dataSource: DataSource): boolean {
  return dataSource.options.type === 'mysql';
}
