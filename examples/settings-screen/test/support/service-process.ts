import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtFile } from './repo';

export interface RunningService {
  readonly url: string;
  readonly jwtSecret: string;
  readonly internalToken: string;
  /** The service's SQLite database file, for a test that sets up state the real clock would take hours to reach. */
  readonly dbPath: string;
  /** What the process wrote, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `node dist/service/main.js` (the standalone service) on a fresh embedded SQLite database, trusting the loopback
 * receiver's CA and allowing 127.0.0.0/8 as webhook targets, as docs/configuration.md describes.
 */
export async function startService(options: { receiverCaPem: string; env?: Record<string, string> }): Promise<RunningService> {
  const dir = mkdtempSync(join(tmpdir(), 'settings-screen-'));
  writeFileSync(join(dir, 'receiver-ca.pem'), options.receiverCaPem);
  const port = await freePort();
  const dbPath = join(dir, 'notifications.sqlite');
  const jwtSecret = randomBytes(32).toString('hex');
  const internalToken = randomBytes(32).toString('hex');
  let output = '';
  const child: ChildProcess = spawn(process.execPath, [builtFile('dist/service/main.js')], {
    cwd: dir, // no stray .env is read
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      PORT: String(port),
      DB_TYPE: 'sqlite',
      DB_PATH: dbPath,
      JWT_SECRET: jwtSecret,
      SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      INTERNAL_API_TOKEN: internalToken,
      WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
      WEBHOOK_EXTRA_CA_FILE: join(dir, 'receiver-ca.pem'),
      LOG_LEVEL: 'warn',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntilReady(`${url}/health/ready`, child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, jwtSecret, internalToken, dbPath, output: () => output, stop };
}

async function waitUntilReady(readyUrl: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`The service exited with ${child.exitCode}:\n${output()}`);
    const ready = await fetch(readyUrl).then(
      (response) => response.ok,
      () => false,
    );
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`The service was not ready within 90 s:\n${output()}`);
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
