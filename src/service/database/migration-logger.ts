import { Logger as NestLogger } from '@nestjs/common';
import type { Logger as TypeOrmLogger } from 'typeorm';

const EXECUTED = /^Migration (\S+) has been executed successfully/;

/**
 * TypeORM's logger for the standalone service: one line per migration applied at start (context `Migrations`),
 * "no pending migrations" otherwise, and TypeORM's own warnings, all through Nest's logger (JSON in the service).
 * Queries are not logged.
 */
export class MigrationLogger implements TypeOrmLogger {
  private readonly logger = new NestLogger('Migrations');

  logSchemaBuild(message: string): void {
    const executed = EXECUTED.exec(message);
    if (executed) this.logger.log(`Applied migration ${executed[1]}`);
    else if (message === 'No migrations are pending') this.logger.log('Database schema is up to date: no pending migrations');
  }

  logMigration(message: string): void {
    this.logger.error(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    if (level === 'warn') this.logger.warn(String(message));
  }

  logQuery(): void {}

  logQueryError(): void {}

  logQuerySlow(): void {}
}
