import type { DataSource } from 'typeorm';

/**
 * True on MySQL/MariaDB, whichever of TypeORM's two driver types (`mysql`, `mariadb`) the DataSource uses: there the
 * queue takes row locks (SKIP LOCKED, FOR UPDATE) and READ COMMITTED, and the migrations quote with backticks.
 */
export function isMySql(dataSource: DataSource): boolean {
  return dataSource.options.type === 'mysql' || dataSource.options.type === 'mariadb';
}
