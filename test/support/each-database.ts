import type { NotificationsModuleOptions } from '../../src/notifications/notifications-options.interface';
import { startTestApp, type TestApp, type TestServiceOptions } from './test-app';
import { startTestAppWithKit, type TestAppWithKit } from './test-app-with-kit';
import { TEST_DATABASE_KINDS, type TestDatabaseKind } from './test-databases';

/**
 * Declares a suite once per test database: SQLite always; when TEST_MYSQL_URL is set, the server through TypeORM's
 * `mysql` and `mariadb` driver types (TEST_DATABASE_KINDS). `$name` in the title names the kind:
 * `describeEachDatabase('webhook delivery on $name', (kind) => { const t = appWithKitPerSuite(kind); … })`.
 */
export function describeEachDatabase(title: string, suite: (kind: TestDatabaseKind) => void): void {
  describe.each(TEST_DATABASE_KINDS)(title, suite);
}

/** {@link describeEachDatabase} for suites that share one database between instances: the server kinds only. */
export function describeEachServerDatabase(title: string, suite: (kind: TestDatabaseKind) => void): void {
  describe.each(TEST_DATABASE_KINDS.filter((kind) => kind.name !== 'sqlite'))(title, suite);
}

/**
 * The app the tests of a suite share: {@link startTestAppWithKit} on a fresh database of `kind` in a `beforeAll`, closed
 * in an `afterAll`. Call it in the suite's body; the handle it returns reaches the app from the first hook after it.
 */
export function appWithKitPerSuite(
  kind: TestDatabaseKind,
  overrides: Partial<NotificationsModuleOptions> = {},
  service: TestServiceOptions = {},
): TestAppWithKit {
  return perSuite(() => startTestAppWithKit(kind, overrides, service));
}

/** {@link appWithKitPerSuite} without the testing kit: {@link startTestApp}'s standalone app. */
export function appPerSuite(
  kind: TestDatabaseKind,
  overrides: Partial<NotificationsModuleOptions> = {},
  service: TestServiceOptions = {},
): TestApp {
  return perSuite(() => startTestApp(kind, overrides, service));
}

/** Starts the app before the suite's tests and closes it after them; until it started, the handle throws on use. */
function perSuite<T extends { close(): Promise<void> }>(start: () => Promise<T>): T {
  let app: T | undefined;
  beforeAll(async () => {
    app = await start();
  });
  afterAll(() => app?.close()); // nothing to close when the start failed: that failure is the one to report
  const started = (): T => {
    if (!app) throw new Error('The suite app is used before its beforeAll started it');
    return app;
  };
  return new Proxy({} as T, {
    get: (_target, key) => Reflect.get(started(), key),
    has: (_target, key) => Reflect.has(started(), key),
    ownKeys: () => Reflect.ownKeys(started()),
    getOwnPropertyDescriptor: (_target, key) => Reflect.getOwnPropertyDescriptor(started(), key),
  });
}
