// The bench runs compiled (`tsc -p bench/tsconfig.build.json` → dist-bench/), so that no process it
// measures carries a TypeScript compiler; paths are therefore taken from the repository root (the folder with the
// lockfile: dist-bench has a copy of package.json, for src/version.ts).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

function repositoryRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package-lock.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package-lock.json above ${from}`);
  }
}

export const ROOT = repositoryRoot(__dirname);
export const RESULTS_DIR = join(ROOT, 'bench', 'results');
