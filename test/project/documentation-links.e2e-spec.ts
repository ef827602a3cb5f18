import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, resolve } from 'node:path';
import { withStagedLibrary } from '../../src/service/scripts/library-package';

const ROOT = resolve(__dirname, '..', '..');
const LINK = /\]\(([^)\s]+)\)/g;
/** A relative path quoted as code (`../shared/spec.md`): a reference to a file, even without a link. */
const QUOTED_PATH = /`(\.\.\/[^`\s]+)`/g;

/** The files `npm pack` would publish in the library's tarball (packed from its generated manifest), relative to its root. */
function packedFiles(): string[] {
  return withStagedLibrary((_stage, packed) => packed);
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

function anchorsIn(markdown: string): Set<string> {
  return new Set([...markdown.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading]) => anchorOf(heading!)));
}

/** Every relative link of a markdown file that does not resolve among `files` (a file, a folder, or a heading in one). */
function brokenLinks(markdownPath: string, files: readonly string[]): string[] {
  const markdown = readFileSync(join(ROOT, markdownPath), 'utf8');
  const broken: string[] = [];
  for (const [, target] of [...markdown.matchAll(LINK), ...markdown.matchAll(QUOTED_PATH)]) {
    if (/^[a-z]+:/i.test(target!)) continue;
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const resolved = path === '' ? markdownPath : normalize(join(dirname(markdownPath), path)).replace(/\/$/, '');
    const exists = files.includes(resolved) || files.some((file) => file.startsWith(`${resolved}/`));
    const anchorExists =
      !anchor || !resolved.endsWith('.md') || !exists || anchorsIn(readFileSync(join(ROOT, resolved), 'utf8')).has(anchor);
    if (!exists || !anchorExists) broken.push(`${markdownPath}: ${target}`);
  }
  return broken;
}

describe('documentation links', () => {
  const packed = packedFiles();

  it('every relative link of the README and the packed docs resolves inside the npm package', () => {
    const markdown = packed.filter((file) => file.endsWith('.md'));
    expect(markdown).toEqual(expect.arrayContaining(['README.md', 'docs/operations.md', 'docs/contract.md']));
    expect(markdown.flatMap((file) => brokenLinks(file, packed))).toEqual([]);
  });

  it('the repository stands alone: no markdown file links outside it', () => {
    const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' }).trim().split('\n');
    const markdown = tracked.filter((file) => file.endsWith('.md'));
    expect(markdown.flatMap((file) => brokenLinks(file, tracked))).toEqual([]);
  });
});
