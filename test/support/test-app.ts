import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import type { DestinationStream } from 'pino';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/service/app.module';
import { LogLevel, NodeEnv } from '../../src/service/config/environment-variables';
import type { AppConfig } from '../../src/service/config/load-app-config';
import { configureApp } from '../../src/service/configure-app';
import { signUserToken } from '../../src/notifications/auth/jwt-user-resolver';
import type { NotificationsModuleOptions } from '../../src/notifications/notifications-options.interface';
import { TEST_JWT_SECRET } from '../../src/testing/boot-test-notifications';
import type { TestDatabase, TestDatabaseKind } from './test-databases';

/** The one JWT secret of the tests, the testing kit's. */
export { TEST_JWT_SECRET };

export interface TestApp {
  readonly app: INestApplication;
  readonly dataSource: DataSource;
  /** supertest against the running app. */
  http(): TestAgent;
  /** `Authorization` header value for a user. */
  bearer(userId: number): string;
  close(): Promise<void>;
}

export function testAppConfig(database: TestDatabase['config']): AppConfig {
  return {
    nodeEnv: NodeEnv.test,
    port: 0,
    database,
    notifications: {
      jwtSecret: TEST_JWT_SECRET,
      encryptionKeys: [{ id: 'test', key: randomBytes(32) }],
      serviceSite: 'https://funding.example.com',
    },
    logLevel: LogLevel.silent,
  };
}

/** What a test may change of the standalone service itself, beside the module options. */
export interface TestServiceOptions {
  /** Merged over {@link testAppConfig} (e.g. `metricsToken`, `logLevel`). */
  readonly config?: Partial<AppConfig>;
  /**
   * Receives the JSON logs. nestjs-pino keeps one root logger per process, made by the first app:
   * capture logs in a test file whose first app is the one given the destination.
   */
  readonly logDestination?: DestinationStream;
}

/** Boots the standalone AppModule, with its real HTTP set-up, on a fresh database of the given kind. */
export async function startTestApp(
  kind: TestDatabaseKind,
  overrides: Partial<NotificationsModuleOptions> = {},
  service: TestServiceOptions = {},
): Promise<TestApp> {
  return startTestAppOn(await kind.create(), overrides, service);
}

/** Boots an app on an existing database; several apps on one database act as several instances. */
export async function startTestAppOn(
  database: TestDatabase,
  overrides: Partial<NotificationsModuleOptions> = {},
  service: TestServiceOptions = {},
): Promise<TestApp> {
  const config = { ...testAppConfig(database.config), ...service.config };
  const moduleRef = await Test.createTestingModule({
    imports: [AppModule.forConfig(config, { resolver: async () => [], ...overrides }, service.logDestination)],
  }).compile();
  const app = configureApp(moduleRef.createNestApplication<NestExpressApplication>({ bodyParser: false, logger: false }), config);
  await app.init();
  return {
    app,
    dataSource: app.get(DataSource),
    http: () => request(app.getHttpServer()),
    bearer: (userId) =>
      `Bearer ${signUserToken(TEST_JWT_SECRET, userId, undefined, { issuer: overrides.jwtIssuer, audience: overrides.jwtAudience })}`,
    async close() {
      await app.close();
      await database.drop();
    },
  };
}
