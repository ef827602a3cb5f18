import { TypeOrmModule } from '@nestjs/typeorm';
import { NOTIFICATIONS_MIGRATIONS } from '../../src';

/** A host app's DataSource for module tests: SQLite in memory, the module's migrations run at start. */
export const inMemoryDatabase = () =>
  TypeOrmModule.forRoot({
    type: 'better-sqlite3',
    database: ':memory:',
    autoLoadEntities: true,
    migrations: NOTIFICATIONS_MIGRATIONS,
    migrationsRun: true,
  });
