import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  LIBRARY_TEMPLATE,
  type LibraryTemplate,
  libraryDistFiles,
  libraryManifest,
  REPOSITORY_ROOT,
  repositoryLibraryManifest,
  type ServiceManifest,
} from './library-package';

const service = JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'package.json'), 'utf8')) as ServiceManifest & Record<string, unknown>;
const template = JSON.parse(readFileSync(join(REPOSITORY_ROOT, LIBRARY_TEMPLATE), 'utf8')) as LibraryTemplate;
/** The standalone service's own packages: its logging and health checks. No host needs them. */
const STANDALONE_ONLY = ['nestjs-pino', 'pino', 'pino-http', '@nestjs/terminus'];
/** What the library's code (NotificationsModule, the testing kit) imports, beyond the framework. */
const LIBRARY_OWN = ['@nestjs/jwt', '@nestjs/throttler', 'ajv', 'ipaddr.js', 'prom-client', 'undici'];

describe('the two manifests: the service (package.json) and the library (generated from src/library.package.json)', () => {
  const library = repositoryLibraryManifest();

  it('the service installs for production with `npm ci --omit=dev`: everything the library needs is a dependency of it', () => {
    expect(service.private).toBe(true); // never published by mistake: the library is published from dist-library/
    const needed = { ...library.dependencies, ...library.peerDependencies };
    const optionalForHosts = Object.keys(library.peerDependenciesMeta ?? {});
    // The testing kit's certificate package is an optional peer the service never loads: a dev dependency here.
    for (const [name, range] of Object.entries(needed)) {
      if (name === 'selfsigned') expect(service.devDependencies?.[name], name).toBe(range);
      else expect(service.dependencies?.[name], name).toBe(range);
    }
    expect(optionalForHosts.sort()).toEqual(['@nestjs/platform-express', '@nestjs/swagger', 'better-sqlite3', 'mysql2', 'selfsigned']);
    for (const name of STANDALONE_ONLY) expect(service.dependencies?.[name], name).toBeDefined();
  });

  it('the library declares its own dependencies, the framework as peers, and none of the standalone-only packages', () => {
    expect(Object.keys(library.dependencies ?? {}).sort()).toEqual(LIBRARY_OWN);
    for (const name of STANDALONE_ONLY) {
      expect(library.dependencies?.[name], name).toBeUndefined();
      expect(library.peerDependencies?.[name], name).toBeUndefined();
    }
    expect(library).toMatchObject({ name: '@funding/notification-webhooks', version: service.version, engines: service.engines });
    expect(library).not.toHaveProperty('scripts');
    expect(library).not.toHaveProperty('devDependencies');
    expect(library.exports).toMatchObject({ '.': { default: './dist/index.js' }, './testing': { default: './dist/testing/index.js' } });
  });

  it('refuses a range that drifted from the service, a dependency the service lacks, and meta for no peer', () => {
    const drifted = { ...template, peerDependencies: { ...template.peerDependencies, '@nestjs/common': '^11.0.0' } };
    expect(() => libraryManifest(service, drifted)).toThrow(
      /peerDependencies\.@nestjs\/common is "\^11\.0\.0" but package\.json has "\^12\.5\.1"/,
    );
    const extra = { ...template, dependencies: { ...template.dependencies, 'left-pad': '^1.3.0' } };
    expect(() => libraryManifest(service, extra)).toThrow(/dependencies\.left-pad is "\^1\.3\.0" but package\.json has no such dependency/);
    const devOnly = { ...template, dependencies: { ...template.dependencies, selfsigned: service.devDependencies!.selfsigned! } };
    expect(() => libraryManifest(service, devOnly)).toThrow(/dependencies\.selfsigned/); // a dependency must be the service's too
    const requiredPeer = { ...template, peerDependenciesMeta: { ...template.peerDependenciesMeta, selfsigned: { optional: false } } };
    expect(() => libraryManifest(service, requiredPeer)).toThrow(/peerDependencies\.selfsigned .* no such dependency/); // a dev dependency
    const orphan = { ...template, peerDependenciesMeta: { ...template.peerDependenciesMeta, pino: { optional: true } } };
    expect(() => libraryManifest(service, orphan)).toThrow(/peerDependenciesMeta\.pino names no peer/);
  });
});

describe('the compiled code the library ships', () => {
  it("is what its entries load or name, never the standalone service's own code", () => {
    const dist = mkdtempSync(join(tmpdir(), 'nw-dist-'));
    const write = (file: string, text = '') => {
      mkdirSync(dirname(join(dist, file)), { recursive: true });
      writeFileSync(join(dist, file), text);
    };
    write('index.js', 'const m = require("./notifications/notifications.module");');
    write('index.js.map');
    write(
      'index.d.ts',
      "export type { Options } from './notifications/options';\nexport { NotificationsModule } from './notifications/notifications.module';",
    );
    write('notifications/notifications.module.js', 'require("../version"); require("./delivery");');
    write('notifications/notifications.module.d.ts', "import type { Clock } from './clock/clock';");
    write('notifications/delivery/index.js');
    write('notifications/options.d.ts', "export type Options = import('./clock/clock').Clock;");
    write('notifications/options.js');
    write('notifications/clock/clock.js');
    write('notifications/clock/clock.d.ts');
    write('version.js');
    write('testing/index.js', "require('./test-receiver');");
    write('testing/test-receiver.js');
    write('generated/openapi-types.js');
    write('service/main.js', 'require("./app.module"); require("../index");');
    write('service/app.module.js', 'require("./config/load-app-config");');
    write('service/config/load-app-config.js');
    write('notifications/common/stale-from-an-old-build.js');
    try {
      expect(libraryDistFiles(dist)).toEqual([
        'generated/openapi-types.js',
        'index.d.ts',
        'index.js',
        'index.js.map',
        'notifications/clock/clock.d.ts',
        'notifications/clock/clock.js',
        'notifications/delivery/index.js',
        'notifications/notifications.module.d.ts',
        'notifications/notifications.module.js',
        'notifications/options.d.ts',
        'notifications/options.js',
        'testing/index.js',
        'testing/test-receiver.js',
        'version.js',
      ]);
    } finally {
      rmSync(dist, { recursive: true, force: true });
    }
  });
});
