import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(__dirname, '..', '..');

/** `npm run -s token -- <id>` as on a fresh checkout: no .env, no JWT_SECRET, so development secrets get generated. */
function token(userId: string) {
  const cwd = mkdtempSync(join(tmpdir(), 'token-script-'));
  try {
    const { PATH, HOME } = process.env;
    return spawnSync(
      process.execPath,
      ['-r', require.resolve('ts-node/register/transpile-only'), join(REPO, 'src/service/scripts/token.ts'), userId],
      {
        cwd,
        env: { PATH, HOME, TS_NODE_PROJECT: join(REPO, 'tsconfig.json') },
        encoding: 'utf8',
      },
    );
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

describe('npm run token', () => {
  it('prints the token alone on stdout, warnings about generated development secrets on stderr', () => {
    const result = token('42');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+\n$/);
    const [, claims] = result.stdout.trim().split('.');
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString('utf8'))).toMatchObject({ sub: '42' });
    expect(result.stderr).toContain('JWT_SECRET is not set: generated a development value');
  });

  it('answers a usage line on stderr and exit code 1 for a user id that is not a positive integer', () => {
    const result = token('x');
    expect(result.status).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Usage: npm run token -- <userId>');
  });
});
