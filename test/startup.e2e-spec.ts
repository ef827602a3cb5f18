import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

describe('service start-up', () => {
  it('exits with a message naming the bad variable', () => {
    const result = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
      cwd: join(__dirname, '..'),
      env: { PATH: process.env.PATH, PORT: 'not-a-port', DB_PATH: ':memory:' },
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('Invalid configuration');
    expect(result.stderr).toContain('PORT must be an integer number');
  });
});
