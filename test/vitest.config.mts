import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: fileURLToPath(new URL('..', import.meta.url)),
    // Multi-instance suites need a shared server database: they run when TEST_MYSQL_URL is set (always in CI).
    include: ['src/**/*.spec.ts', 'test/**/*.e2e-spec.ts', ...(process.env.TEST_MYSQL_URL ? ['test/**/*.mysql-e2e-spec.ts'] : [])],
    globalSetup: ['test/support/global-setup.ts'],
    globals: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
