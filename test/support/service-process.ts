import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { freePort } from './free-port';

const ROOT = resolve(__dirname, '../..');

/** The standalone service (`src/service/main.ts`) in its own process, configured by environment like production. */
export interface ServiceProcess {
  readonly baseUrl: string;
  readonly child: ChildProcess;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with how the process ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** How to run the service: by default `src/service/main.ts` through ts-node, in the repository. */
export interface ServiceCommand {
  readonly cwd: string;
  readonly command: string;
  readonly args: readonly string[];
  /** In a process group of its own, as a shell runs a foreground job: `process.kill(-pid, 'SIGINT')` is Ctrl-C. */
  readonly processGroup?: boolean;
}

const FROM_SOURCE: ServiceCommand = {
  cwd: ROOT,
  command: process.execPath,
  args: ['-r', 'ts-node/register/transpile-only', 'src/service/main.ts'],
};

export async function startServiceProcess(env: Record<string, string>, how: ServiceCommand = FROM_SOURCE): Promise<ServiceProcess> {
  const port = await freePort();
  const child = spawnService(how, { PORT: String(port), ...env });
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

/** Runs the service until it exits by itself (a start that must fail): exit code, stdout, stderr and how long it took. */
export async function runServiceUntilExit(
  env: Record<string, string>,
  how: ServiceCommand = FROM_SOURCE,
): Promise<{ code: number | null; stdout: string; stderr: string; durationMs: number }> {
  const started = performance.now();
  const child = spawnService(how, { PORT: String(await freePort()), ...env });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr, durationMs: performance.now() - started };
}

/** The JSON log lines of an output; fails naming the first line that is not JSON. */
export function jsonLogLines(output: string): { level: number; context?: string; msg: string }[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as { level: number; context?: string; msg: string };
      } catch {
        throw new Error(`not a JSON log line: ${JSON.stringify(line)}\n${output}`);
      }
    });
}

function spawnService(how: ServiceCommand, env: Record<string, string>): ChildProcess {
  return spawn(how.command, how.args, {
    cwd: how.cwd,
    env: { PATH: process.env.PATH, TS_NODE_PROJECT: resolve(ROOT, 'tsconfig.json'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: how.processGroup ?? false,
  });
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
