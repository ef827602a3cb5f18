import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { jsonLogLines, type ServiceCommand, startServiceProcess } from '../support/service-process';

const ROOT = resolve(__dirname, '..', '..');
const PRODUCTION = {
  NODE_ENV: 'production',
  JWT_SECRET: 'production-install-jwt-secret-0123456789abcdef',
  JWT_ISSUER: 'https://funding.example.com',
  JWT_AUDIENCE: 'notification-settings',
  SECRETS_ENCRYPTION_KEY: `k1:${randomBytes(32).toString('base64')}`,
  METRICS_TOKEN: 'production-install-metrics-token-0123456789ab',
};

function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 300_000, env: { ...process.env, ...env } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stdout}${result.stderr}`);
  return result.stdout;
}

/**
 * better-sqlite3's install script (`prebuild-install || node-gyp rebuild`) downloads a prebuilt binary, or compiles
 * SQLite for a minute or more where it cannot (no network here). Its documented local prebuilds folder
 * (`npm_config_better_sqlite3_local_prebuilds`) gets the binary the repository's own install made, for this Node's ABI,
 * in the prebuild's tarball layout: the install script runs as in production and finds it, as it would find the download.
 */
function localPrebuilds(dir: string): string {
  const prebuilds = join(dir, 'prebuilds');
  mkdirSync(prebuilds);
  const { version } = JSON.parse(readFileSync(join(ROOT, 'node_modules', 'better-sqlite3', 'package.json'), 'utf8')) as { version: string };
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  run(
    'tar',
    ['-czf', join(prebuilds, name), '-C', join(ROOT, 'node_modules', 'better-sqlite3'), 'build/Release/better_sqlite3.node'],
    ROOT,
  );
  return prebuilds;
}

/**
 * The production recipe of docs/operations.md (a Dockerfile's two stages) in a copy of the repository: the build stage
 * is the repository's own `npm ci` and a build (`tsc -p tsconfig.build.json` into the copy, what `nest build` runs;
 * nest-cli.json adds no assets or plugins); the runtime stage is package.json, package-lock.json and dist/, then
 * `npm ci --omit=dev` (offline: from the npm cache the repository's install filled) and `node dist/service/main.js`.
 */
describe('production install: `npm ci --omit=dev`, then `node dist/service/main.js`', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'nw-production-'));
    run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--outDir', join(dir, 'dist')], ROOT);
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(join(ROOT, file), join(dir, file));
    const started = performance.now();
    run('npm', ['ci', '--omit=dev', '--offline', '--no-audit', '--no-fund', '--loglevel=error'], dir, {
      npm_config_better_sqlite3_local_prebuilds: localPrebuilds(dir),
    });
    const installed = Object.keys(
      (JSON.parse(readFileSync(join(dir, 'node_modules', '.package-lock.json'), 'utf8')) as { packages: object }).packages,
    ).length;
    const megabytes = run('du', ['-sm', 'node_modules'], dir).split('\t')[0];
    console.log(`npm ci --omit=dev: ${installed} packages, ${megabytes} MB, in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }, 360_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('installs every production dependency and no dev dependency, leaving package.json as it was', () => {
    for (const devOnly of ['@nestjs/cli', '@nestjs/testing', 'eslint', 'vitest', 'prettier', 'supertest'])
      expect(existsSync(join(dir, 'node_modules', devOnly)), devOnly).toBe(false);
    run('npm', ['ls', '--omit=dev', '--all', '--offline'], dir); // fails on a missing or invalid production dependency
    expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  });

  it('`node dist/service/main.js` serves with the production environment, logs only JSON, and stops on SIGINT', async () => {
    const node: ServiceCommand = { cwd: dir, command: process.execPath, args: ['dist/service/main.js'] };
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
    const node: ServiceCommand = { cwd: dir, command: process.execPath, args: ['dist/service/main.js'] };
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
