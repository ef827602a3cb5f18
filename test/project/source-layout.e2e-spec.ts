import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

/**
 * The naming rule of docs/architecture.md ("File names say what a file holds"): a newcomer finds a provider by its
 * file name, and `common/` holds only what several folders share, sorted by kind.
 */
const SRC = join(__dirname, '..', '..', 'src');
const ROLES = ['service', 'repository', 'controller', 'guard', 'pipe', 'filter', 'indicator', 'logger', 'subscriber'];
const COMMON_KINDS = ['api', 'concurrency', 'database', 'values'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The file a relative import names: `./x` is `x.ts`, or `x/index.ts` for a folder. */
function importedFile(importer: string, specifier: string): string {
  const target = join(dirname(importer), specifier);
  return existsSync(target) && statSync(target).isDirectory() ? join(target, 'index.ts') : `${target}.ts`;
}

/**
 * The rooms' imports: a folder's subfolders are its rooms, and an import from a file under one room to a file under a
 * sibling room is an edge between the two (`notifications/common` → `notifications/delivery`), named with one import
 * that makes it. A folder's own files (a module, its options) stand above its rooms: they assemble them.
 */
function roomImports(): Map<string, Map<string, string>> {
  const edges = new Map<string, Map<string, string>>();
  for (const file of sourceFiles(SRC)) {
    for (const [, specifier] of readFileSync(file, 'utf8').matchAll(/(?:from |import\(|require\()'(\.[^']*)'/g)) {
      const target = relative(SRC, importedFile(file, specifier!));
      if (target.startsWith('..')) continue;
      const from = relative(SRC, dirname(file)).split(sep).filter(Boolean);
      const to = dirname(target)
        .split(sep)
        .filter((part) => part !== '.');
      let shared = 0;
      while (shared < from.length && shared < to.length && from[shared] === to[shared]) shared++;
      if (shared === from.length || shared === to.length) continue;
      const [a, b] = [from.slice(0, shared + 1).join('/'), to.slice(0, shared + 1).join('/')];
      const out = edges.get(a) ?? edges.set(a, new Map()).get(a)!;
      if (!out.has(b)) out.set(b, `${relative(SRC, file)} imports ${specifier}`);
    }
  }
  return edges;
}

/** Each cycle of rooms once, as the imports that close it. */
function roomCycles(edges: Map<string, Map<string, string>>): string[] {
  const cycles = new Map<string, string>();
  for (const [start, out] of edges) {
    for (const next of out.keys()) {
      // The shortest way back from `next` to `start`, if any.
      const previous = new Map<string, string>([[next, next]]);
      const queue = [next];
      while (queue.length > 0 && !previous.has(start)) {
        const room = queue.shift()!;
        for (const further of edges.get(room)?.keys() ?? []) {
          if (previous.has(further)) continue;
          previous.set(further, room);
          queue.push(further);
        }
      }
      if (!previous.has(start)) continue;
      const path = [start];
      for (let room = start; room !== next; room = previous.get(room)!) path.splice(1, 0, previous.get(room)!);
      const key = [...path].sort().join(' ');
      if (cycles.has(key)) continue;
      const steps = path.map(
        (room, i) => `${room} → ${path[(i + 1) % path.length]} (${edges.get(room)!.get(path[(i + 1) % path.length]!)})`,
      );
      cycles.set(key, steps.join('; '));
    }
  }
  return [...cycles.values()];
}

describe('source layout', () => {
  it('names the role of every injectable in its file name', () => {
    const unnamed = sourceFiles(SRC)
      .filter((file) => readFileSync(file, 'utf8').includes('@Injectable('))
      .filter((file) => !ROLES.some((role) => file.endsWith(`.${role}.ts`)))
      .map((file) => relative(SRC, file));
    expect(unnamed).toEqual([]);
  });

  it('keeps common/ to folders of one kind each, every file shared by more than one folder', () => {
    const common = join(SRC, 'notifications', 'common');
    const entries = readdirSync(common, { withFileTypes: true });
    expect(entries.filter((entry) => !entry.isDirectory()).map((entry) => entry.name)).toEqual([]);
    expect(entries.map((entry) => entry.name).sort()).toEqual(COMMON_KINDS);
    // Who imports each file of common/: a folder outside it, or another file of common/ (whose own consumers share it too:
    // what the validation pipe needs is shared by every controller that validates with it).
    const importers = new Map<string, { folders: Set<string>; commonFiles: Set<string> }>();
    for (const file of [...sourceFiles(SRC), ...sourceFiles(join(SRC, '..', 'test'))]) {
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
        const target = join(file, '..', spec!);
        if (!target.startsWith(common)) continue;
        const entry = importers.get(target) ?? importers.set(target, { folders: new Set(), commonFiles: new Set() }).get(target)!;
        if (file.startsWith(common)) entry.commonFiles.add(file.replace(/\.ts$/, ''));
        else entry.folders.add(relative(SRC, join(file, '..')));
      }
    }
    const consumers = (target: string, seen = new Set<string>()): Set<string> => {
      const entry = importers.get(target);
      if (!entry || seen.has(target)) return new Set();
      seen.add(target);
      return new Set([...entry.folders, ...[...entry.commonFiles].flatMap((file) => [...consumers(file, seen)])]);
    };
    const singleConsumer = [...importers.keys()].filter((target) => consumers(target).size < 2).map((target) => relative(common, target));
    expect(singleConsumer).toEqual([]);
  });

  it('has no cycle between the rooms of any folder under src/: dependencies run one way', () => {
    expect(roomCycles(roomImports())).toEqual([]);
  });
});
