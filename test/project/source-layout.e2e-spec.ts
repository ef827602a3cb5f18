import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

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
    const importers = new Map<string, Set<string>>();
    for (const file of [...sourceFiles(SRC), ...sourceFiles(join(SRC, '..', 'test'))]) {
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
        const target = join(file, '..', spec);
        if (!target.startsWith(common)) continue;
        const folder = relative(SRC, join(file, '..'));
        if (folder.startsWith(join('notifications', 'common'))) continue;
        importers.set(target, (importers.get(target) ?? new Set()).add(folder));
      }
    }
    const singleConsumer = [...importers].filter(([, folders]) => folders.size < 2).map(([target]) => relative(common, target));
    expect(singleConsumer).toEqual([]);
  });
});
