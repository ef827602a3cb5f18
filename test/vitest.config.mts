import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const fromRoot = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));

export default defineConfig({
  // Tests and examples import the library by its package name, as its users do.
  resolve: {
    alias: [
      { find: /^@funding\/notification-webhooks$/, replacement: fromRoot('src/index.ts') },
      { find: /^@funding\/notification-webhooks\/testing$/, replacement: fromRoot('src/testing/index.ts') },
      { find: /^@funding\/notification-webhooks\/openapi-types$/, replacement: fromRoot('src/generated/openapi-types.ts') },
    ],
  },
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    // Multi-instance suites need a shared server database: they run when TEST_MYSQL_URL is set (always in CI). What needs
    // another toolchain (Go, Python) runs only under `npm run test:examples` (TEST_TOOLCHAINS).
    include: process.env.TEST_TOOLCHAINS
      ? ['test/**/*.toolchain-spec.ts']
      : [
          'src/**/*.spec.ts',
          'test/**/*.e2e-spec.ts',
          ...(process.env.TEST_MYSQL_URL ? ['test/**/*.mysql-e2e-spec.ts', 'examples/*/test/**/*.mysql-e2e-spec.ts'] : []),
        ],
    globalSetup: ['test/support/global-setup.ts'],
    // Vitest's default, pinned: before-hooks run one after another in the order they were declared, after-hooks in
    // reverse. A suite's own beforeAll (listen, seed) runs after test/support/each-database.ts started its app.
    sequence: { hooks: 'stack' },
    globals: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
