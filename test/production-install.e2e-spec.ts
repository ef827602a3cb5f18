import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { jsonLogLines, type ServiceCommand, startServiceProcess } from './support/service-process';

const ROOT = resolve(__dirname, '..');
const PRODUCTION = {
  NODE_ENV: 'production',
  JWT_SECRET: 'production-install-jwt-secret-0123456789abcdef',
  SECRETS_ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}`,
};

function run(command: string, args: string[], cwd: string): void {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 180_000 });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}${result.stderr}`);
}

/**
 * The production path of docs/operations.md in a copy of the repository: build with the dev dependencies, then
 * `npm run prune:production` and run `node dist/main.js` with only the production dependencies installed.
 * The build is `tsc -p tsconfig.build.json` into the copy (what `nest build` runs; nest-cli.json adds no assets or
 * plugins); node_modules is copied as hard links, so pruning the copy is fast and leaves the repository's alone.
 */
describe('production install: built, pruned to production dependencies, run with node', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nw-production-'));
    run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', join(dir, 'dist')], ROOT);
    mkdirSync(join(dir, 'src', 'scripts'), { recursive: true });
    for (const file of ['package.json', 'package-lock.json', 'tsconfig.json', 'src/scripts/prune-production.ts'])
      copyFileSync(join(ROOT, file), join(dir, file));
    run('cp', ['-al', join(ROOT, 'node_modules'), join(dir, 'node_modules')], ROOT);
    rmSync(join(dir, 'node_modules', '.package-lock.json')); // npm would rewrite it in place, through the hard link
    run('npm', ['run', '-s', 'prune:production', '--', '--offline'], dir);
  }, 240_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('has no dev dependency left', () => {
    for (const devOnly of ['@nestjs/cli', '@nestjs/testing', 'eslint', 'vitest'])
      expect(existsSync(join(dir, 'node_modules', devOnly)), devOnly).toBe(false);
  });

  it('`node dist/main.js` serves with the production environment, logs only JSON, and stops on SIGINT', async () => {
    const node: ServiceCommand = { cwd: dir, command: process.execPath, args: ['dist/main.js'] };
    const service = await startServiceProcess({ ...PRODUCTION, DB_PATH: join(dir, 'data', 'notifications.sqlite') }, node);
    const ready = await fetch(`${service.baseUrl}/health/ready`);
    service.child.kill('SIGINT');
    const exit = await service.exited;

    expect(ready.status).toBe(200);
    expect(exit, service.output()).toEqual({ code: 0, signal: null });
    const messages = jsonLogLines(service.output()).map((line) => line.msg);
    expect(messages).toContain('Applied migration CreatePreferencesAndSecrets1763800000000');
    expect(messages).toContain('Received SIGINT; stopping: readiness 503, then draining the deliveries in flight');
    expect(messages.at(-1)).toMatch(/^Stopped in \d+ ms$/);
  });

  it('stops on SIGTERM when nobody reads its stdout any more (the log lines fail with EPIPE)', async () => {
    const node: ServiceCommand = { cwd: dir, command: process.execPath, args: ['dist/main.js'] };
    const service = await startServiceProcess({ ...PRODUCTION, DB_PATH: join(dir, 'data', 'no-reader.sqlite') }, node);
    service.child.stdout!.destroy();
    service.child.kill('SIGTERM');

    expect(await service.exited).toEqual({ code: 0, signal: null }); // it hung, retrying the write, before
  });

  it('`npm start` passes SIGTERM on to node, which drains and exits before npm does: no orphan left serving', async () => {
    const npmStart: ServiceCommand = { cwd: dir, command: 'npm', args: ['start', '--ignore-scripts'] }; // no prestart build: dist/ is built
    const service = await startServiceProcess({ ...PRODUCTION, DB_PATH: join(dir, 'data', 'npm-start.sqlite') }, npmStart);
    const firstLogLine = service
      .output()
      .split('\n')
      .find((line) => line.startsWith('{'))!;
    const nodePid = (JSON.parse(firstLogLine) as { pid: number }).pid;
    service.child.kill('SIGTERM');
    const exit = await service.exited;

    expect(exit, service.output()).toEqual({ code: 0, signal: null });
    expect(service.output()).toMatch(/"msg":"Received SIGTERM; stopping/);
    expect(service.output()).toMatch(/"msg":"Stopped in \d+ ms"/);
    expect(isRunning(nodePid)).toBe(false);
    expect(
      await fetch(`${service.baseUrl}/health/live`).then(
        () => 'answered',
        () => 'refused',
      ),
    ).toBe('refused');
  });

  it('Ctrl-C under `npm start` (SIGINT to npm and node, and forwarded by npm) drains once and exits 0', async () => {
    const npmStart: ServiceCommand = { cwd: dir, command: 'npm', args: ['start', '--ignore-scripts'], processGroup: true };
    const service = await startServiceProcess({ ...PRODUCTION, DB_PATH: join(dir, 'data', 'ctrl-c.sqlite') }, npmStart);
    process.kill(-service.child.pid!, 'SIGINT');
    const exit = await service.exited;

    expect(exit, service.output()).toEqual({ code: 0, signal: null });
    expect(service.output().match(/"msg":"Received SIGINT; stopping/g)).toHaveLength(1);
    expect(service.output()).toMatch(/"msg":"Stopped in \d+ ms"/);
  });
});

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
