// `npm run build:library` (after `npm run build`): stages the library, @funding/notification-webhooks, in dist-library/
// for `npm pack` / `npm publish`. The root package.json is the standalone service's manifest (real dependencies, so that
// `npm ci --omit=dev && node dist/service/main.js` works); the library's manifest is src/library.package.json (its exports, its own
// dependencies, the framework packages as peers, what its testing kit and Swagger decorators may use as optional peers),
// completed here with the root's version, license and engines. Every range it declares must be the root's range for that
// package: the service is what the suite tests, so the library may not promise another version; a drift stops the build.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

type Ranges = Record<string, string>;

export interface ServiceManifest {
  readonly version: string;
  readonly license?: string;
  readonly engines?: Ranges;
  readonly dependencies?: Ranges;
  readonly devDependencies?: Ranges;
}

export interface LibraryTemplate {
  readonly name: string;
  readonly files: readonly string[];
  readonly dependencies?: Ranges;
  readonly peerDependencies?: Ranges;
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  readonly [field: string]: unknown;
}

export type LibraryManifest = LibraryTemplate & { readonly version: string };

export const REPOSITORY_ROOT = resolve(__dirname, '..', '..', '..');
export const LIBRARY_TEMPLATE = join('src', 'library.package.json');
export const LIBRARY_STAGE = 'dist-library';

/**
 * The library's package.json: the template with the service's version, license and engines. Throws, naming each
 * package, when a dependency or peer of the template has another range than the root's dependencies (or
 * devDependencies, for an optional peer), or names a package the service does not have.
 */
export function libraryManifest(service: ServiceManifest, template: LibraryTemplate): LibraryManifest {
  const rootRange = (name: string) => service.dependencies?.[name] ?? service.devDependencies?.[name];
  const drift: string[] = [];
  for (const [field, ranges] of [
    ['dependencies', template.dependencies],
    ['peerDependencies', template.peerDependencies],
  ] as const) {
    for (const [name, range] of Object.entries(ranges ?? {})) {
      // What a host gets, the service runs on too; only an optional peer (the testing kit's) may be a dev dependency here.
      const optional = field === 'peerDependencies' && template.peerDependenciesMeta?.[name]?.optional === true;
      const expected = optional ? rootRange(name) : service.dependencies?.[name];
      if (range !== expected)
        drift.push(
          `${field}.${name} is "${range}" but package.json has ${expected === undefined ? 'no such dependency' : `"${expected}"`}`,
        );
    }
  }
  for (const name of Object.keys(template.peerDependenciesMeta ?? {}))
    if (!template.peerDependencies?.[name]) drift.push(`peerDependenciesMeta.${name} names no peer`);
  if (drift.length > 0) throw new Error(`${LIBRARY_TEMPLATE} disagrees with package.json:\n  - ${drift.join('\n  - ')}`);
  const { name, description, ...rest } = template;
  return { name, version: service.version, description, license: service.license, engines: service.engines, ...rest };
}

function readJson<T>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

/** The library's manifest from this repository's package.json and template. */
export function repositoryLibraryManifest(root = REPOSITORY_ROOT): LibraryManifest {
  return libraryManifest(readJson(join(root, 'package.json')), readJson(join(root, LIBRARY_TEMPLATE)));
}

/** The library's entry points in dist/ (`exports`): what a host can load, and so all the compiled code the package ships. */
export const LIBRARY_ENTRIES = ['index', 'testing/index', 'generated/openapi-types'];
/** A relative module a compiled file loads (`require("./x")`) or its declarations name (`from "./x"`, `import("./x")`). */
const RELATIVE_MODULE = /(?:require\(|from |import\()(["'])(\.{1,2}\/[^"']+)\1/g;

/**
 * The files of `distRoot` the library needs (paths relative to it): its entries' `.js` and `.d.ts`, and those of every
 * module they load or name, with their source maps. The standalone service's own code (`service/`: `main.js`, `app.module.js`,
 * its config, logging, health and scripts) is left out, and so is everything else no entry reaches.
 */
export function libraryDistFiles(distRoot: string): string[] {
  const modules = new Set<string>();
  const visit = (module: string) => {
    if (modules.has(module)) return;
    modules.add(module);
    for (const extension of ['.js', '.d.ts']) {
      const file = join(distRoot, `${module}${extension}`);
      if (!existsSync(file)) continue;
      for (const [, , specifier] of readFileSync(file, 'utf8').matchAll(RELATIVE_MODULE)) {
        const target = relative(distRoot, join(dirname(file), specifier)).replace(/\.js$/, '');
        visit(existsSync(join(distRoot, target, 'index.js')) ? join(target, 'index') : target);
      }
    }
  };
  for (const entry of LIBRARY_ENTRIES) visit(entry);
  return [...modules]
    .flatMap((module) => ['.js', '.js.map', '.d.ts'].map((extension) => `${module}${extension}`))
    .filter((file) => existsSync(join(distRoot, file)))
    .sort();
}

/**
 * Writes the library package into `stage`: its package.json and the files it lists (plus the README, which npm always
 * packs), copied from the repository with the same paths, so `exports` reads as in the repository (`./dist/index.js`);
 * of dist/, only what the library's entries reach ({@link libraryDistFiles}).
 * `dist: false` leaves out the compiled code (for tests of the packed file list without a build).
 */
export function stageLibrary(stage: string, { root = REPOSITORY_ROOT, dist = true } = {}): LibraryManifest {
  const manifest = repositoryLibraryManifest(root);
  if (dist && !existsSync(join(root, 'dist', 'index.js')))
    throw new Error(`${join(root, 'dist')} has no index.js: run \`npm run build\` first`);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  for (const path of ['README.md', ...manifest.files]) {
    if (path === 'dist') {
      if (dist) for (const file of libraryDistFiles(join(root, 'dist'))) cpSync(join(root, 'dist', file), join(stage, 'dist', file));
      continue;
    }
    cpSync(join(root, path), join(stage, path), { recursive: true });
  }
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/**
 * What `npm pack` would put in the library's tarball (paths relative to the package root), and the staged package's root
 * while `use` runs: staged without dist/ into a temporary folder, so no build is needed.
 */
export function withStagedLibrary<T>(use: (stage: string, packed: string[]) => T): T {
  const stage = mkdtempSync(join(tmpdir(), 'nw-library-'));
  try {
    stageLibrary(stage, { dist: false });
    const output = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: stage,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const packed = (JSON.parse(output) as { files: { path: string }[] }[])[0]!.files.map((file) => file.path);
    return use(stage, packed);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const stage = resolve(process.argv[2] ?? join(REPOSITORY_ROOT, LIBRARY_STAGE));
  try {
    const manifest = stageLibrary(stage);
    console.log(`${manifest.name}@${manifest.version} staged in ${stage}: \`npm pack ${stage}\` or \`npm publish ${stage}\``);
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
