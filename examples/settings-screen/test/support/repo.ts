import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));
export const exampleRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The built standalone service and testing kit: the test runs what `npm start` runs, not the sources. */
export function builtFile(path: string): string {
  const file = `${repoRoot}${path}`;
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` at the repository root first`);
  return file;
}

/** `@funding/notification-webhooks/testing` from the build (the loopback HTTPS receiver). */
export function testingKit(): typeof import('@funding/notification-webhooks/testing') {
  return createRequire(import.meta.url)(builtFile('dist/testing/index.js')) as typeof import('@funding/notification-webhooks/testing');
}
