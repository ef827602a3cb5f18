import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../..');

/** A receiver example running as its own process, its stdout read line by line. */
export interface ExampleProcess {
  readonly child: ChildProcess;
  /** The stdout lines that parse as JSON objects (the examples print one per delivery). */
  jsonLines(): Record<string, unknown>[];
  /** Everything written to stdout and stderr so far. */
  output(): string;
  /** Resolves once a stdout line matches; rejects with the output on timeout or if the process exits first. */
  waitForLine(matches: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  readonly exited: Promise<number | null>;
  /** SIGTERM to this process (and, for `go run`, its compiled child in the same process group), then waits for it. */
  stop(): Promise<void>;
}

export function startExampleProcess(command: string, args: readonly string[], env: Record<string, string> = {}): ExampleProcess {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TS_NODE_PROJECT: resolve(ROOT, 'tsconfig.json'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so stop() reaches what `go run` starts
  });
  let output = '';
  const lines: string[] = [];
  const listeners = new Set<() => void>();
  let pending = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    pending += chunk.toString();
    const complete = pending.split('\n');
    pending = complete.pop() ?? '';
    lines.push(...complete);
    for (const listener of listeners) listener();
  });
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let ended = false;
  const exited = new Promise<number | null>((resolveExit) => {
    child.once('exit', (code) => resolveExit(code));
    child.once('error', (error) => {
      output += `\n${command}: ${error.message}`; // e.g. go not installed
      resolveExit(null);
    });
  });
  void exited.then(() => {
    ended = true;
    listeners.forEach((listener) => listener());
  });

  const waitForLine = (matches: (line: string) => boolean, timeoutMs = 20_000) =>
    new Promise<string>((resolvePromise, reject) => {
      const check = () => {
        const found = lines.find(matches);
        if (found !== undefined) finish(() => resolvePromise(found));
        else if (ended) finish(() => reject(new Error(`exited before the line:\n${output}`)));
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`no such line within ${timeoutMs} ms:\n${output}`))), timeoutMs);
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        listeners.delete(check);
        settle();
      };
      listeners.add(check);
      check();
    });

  return {
    child,
    jsonLines: () =>
      lines.flatMap((line) => {
        try {
          const parsed: unknown = JSON.parse(line);
          return typeof parsed === 'object' && parsed !== null ? [parsed as Record<string, unknown>] : [];
        } catch {
          return [];
        }
      }),
    output: () => output,
    waitForLine,
    exited,
    async stop() {
      if (!ended && child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      await exited;
    },
  };
}
