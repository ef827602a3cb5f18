import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';

const ROOT = resolve(__dirname, '../..');

/** The standalone service (`src/main.ts`) in its own process, configured by environment like production. */
export interface ServiceProcess {
  readonly baseUrl: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with how the process ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export async function startServiceProcess(env: Record<string, string>): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, TS_NODE_PROJECT: resolve(ROOT, 'tsconfig.json'), PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code, signal]) => ({ code: code as number | null, signal: signal as NodeJS.Signals | null }));
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntilListening(
    baseUrl,
    () => child.exitCode !== null || child.signalCode !== null,
    () => output,
  );
  return { baseUrl, child, output: () => output, exited };
}

async function waitUntilListening(baseUrl: string, hasExited: () => boolean, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (hasExited()) throw new Error(`the service exited during start-up:\n${output()}`);
    const answered = await fetch(`${baseUrl}/api/docs-json`).then(
      () => true,
      () => false,
    );
    if (answered) return;
    await delay(100);
  }
  throw new Error(`the service did not listen within 60 s:\n${output()}`);
}

async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
