import { randomBytes } from 'node:crypto';
import type { ModuleMetadata } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { signUserToken } from '../notifications/auth/jwt-user-resolver';
import { NotificationsModule } from '../notifications/notifications.module';
import type { NotificationsModuleOptions } from '../notifications/notifications-options.interface';
import { NOTIFICATIONS_ENTITIES, NOTIFICATIONS_MIGRATIONS } from '../notifications/notifications.schema';
import { attachNotificationsTestKit, type NotificationsTestKit } from './notifications-test-kit';
import { notificationsTestOptions } from './notifications-test-options';
import { TestClock } from './test-clock';
import { startTestReceiver, type TestReceiver } from './test-receiver';

/** HS256 key of the settings API in a kit booted without `resolveUserId`; {@link TestNotifications.bearer} signs with it. */
export const TEST_JWT_SECRET = 'notifications-test-jwt-secret-0123456789abcdef';

export interface BootTestNotificationsOptions {
  /** Where deliveries go; by default a new receiver, closed by `close()`. */
  readonly receiver?: TestReceiver;
  /** By default a new TestClock at 2026-11-22T12:00:00Z. */
  readonly clock?: TestClock;
  /** Module options on top of the kit's (a JWT secret, a random encryption key, the receiver wiring, the clock). */
  readonly module?: Partial<NotificationsModuleOptions>;
  /**
   * The DataSource, by default SQLite in memory. The kit adds `autoLoadEntities`, the module's migrations and
   * `migrationsRun`, e.g. `{ type: 'mysql', url: 'mysql://root@127.0.0.1:3306/test', timezone: 'Z' }`. Give your own
   * `migrations` here to test your tables as production creates them.
   */
  readonly database?: DataSourceOptions;
  /**
   * Your own modules, booted next to NotificationsModule; they can inject `WebhookPublisher` and the other exports.
   * On the default in-memory database the tables of their entities (`TypeOrmModule.forFeature`) are created as
   * `synchronize` would; the module's own come from its migrations.
   */
  readonly imports?: ModuleMetadata['imports'];
}

/** A booted module with its test receiver and test clock. */
export interface TestNotifications extends NotificationsTestKit {
  /** `Bearer <JWT>` for `userId`, for the settings API (when booted without `resolveUserId`). */
  bearer(userId: number): string;
  /** Closes the app, then the receiver if the kit started it. */
  close(): Promise<void>;
}

const IN_MEMORY_SQLITE: DataSourceOptions = { type: 'better-sqlite3', database: ':memory:' };

/**
 * The kit's in-memory DataSource: the module's tables from its migrations, then the host entities' tables with the
 * statements `synchronize` would run on an empty database (computed on a scratch in-memory database that has only them,
 * so the module's tables stay exactly as the migrations made them).
 */
async function withHostTables(options?: DataSourceOptions): Promise<DataSource> {
  const dataSource = await new DataSource(options ?? IN_MEMORY_SQLITE).initialize();
  const moduleEntities = new Set<unknown>(NOTIFICATIONS_ENTITIES);
  const hostEntities = (Array.isArray(options?.entities) ? options.entities : []).filter((entity) => !moduleEntities.has(entity));
  if (hostEntities.length === 0) return dataSource;
  const scratch = await new DataSource({ ...IN_MEMORY_SQLITE, entities: hostEntities }).initialize();
  try {
    const { upQueries } = await scratch.driver.createSchemaBuilder().log();
    for (const { query, parameters } of upQueries) await dataSource.query(query, parameters);
  } finally {
    await scratch.destroy();
  }
  return dataSource;
}

/**
 * Boots NotificationsModule in one call: TypeORM (in-memory SQLite unless `database` says otherwise) with the
 * migrations run, `ScheduleModule.forRoot()`, the module wired to a loopback HTTPS receiver, and a test clock.
 * The HTTP app is initialised, not listening: use `supertest(kit.app.getHttpServer())`.
 */
export async function bootTestNotifications(options: BootTestNotificationsOptions = {}): Promise<TestNotifications> {
  const receiver = options.receiver ?? (await startTestReceiver());
  const clock = options.clock ?? new TestClock();
  const database = options.database ?? IN_MEMORY_SQLITE;
  const migrations = [...new Set([...(Array.isArray(database.migrations) ? database.migrations : []), ...NOTIFICATIONS_MIGRATIONS])];
  const moduleOptions: NotificationsModuleOptions = {
    ...(options.module?.resolveUserId ? {} : { jwtSecret: TEST_JWT_SECRET }),
    encryptionKeys: [{ id: 'test', key: randomBytes(32) }],
    ...notificationsTestOptions({ receiver, clock }),
    ...options.module,
  };
  try {
    const app = await NestFactory.create(
      {
        imports: [
          TypeOrmModule.forRootAsync({
            useFactory: () => ({ ...database, autoLoadEntities: true, migrations, migrationsRun: true, synchronize: false }),
            dataSourceFactory: options.database ? undefined : withHostTables,
          }),
          ScheduleModule.forRoot(),
          NotificationsModule.forRoot(moduleOptions),
          ...(options.imports ?? []),
        ],
      },
      { logger: false, abortOnError: false },
    );
    await app.init();
    const kit = attachNotificationsTestKit(app, { receiver, clock });
    return {
      ...kit,
      bearer: (userId) =>
        `Bearer ${signUserToken(moduleOptions.jwtSecret ?? TEST_JWT_SECRET, userId, undefined, {
          issuer: moduleOptions.jwtIssuer,
          audience: moduleOptions.jwtAudience,
        })}`,
      async close() {
        await app.close();
        if (!options.receiver) await receiver.close();
      },
    };
  } catch (error) {
    if (!options.receiver) await receiver.close();
    throw error;
  }
}
