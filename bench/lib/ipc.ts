import { type ChildProcess, fork } from 'node:child_process';

type Handler = (...args: never[]) => unknown;
type Request = { id: number; method: string; args: unknown[] };
type Reply = { id: number; result?: unknown; error?: string };

/** In a child process: answers `call(method, ...args)` from the parent with the named handler. */
export function serveIpc(handlers: Record<string, Handler>): void {
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message: Request) => {
    const handler = handlers[message.method] as ((...args: unknown[]) => unknown) | undefined;
    const reply = (payload: Omit<Reply, 'id'>) => process.send?.({ id: message.id, ...payload });
    if (!handler) return reply({ error: `unknown method ${message.method}` });
    Promise.resolve()
      .then(() => handler(...message.args))
      .then(
        (result) => reply({ result }),
        (error: unknown) => reply({ error: (error as Error).stack ?? String(error) }),
      );
  });
  process.send?.({ id: 0, result: 'ready' });
}

/** A child process of the compiled bench (plain `node`, no TypeScript compiler in it) spoken to over IPC. */
export class IpcChild {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  readonly exited: Promise<number | null>;
  /** Resolves when the child has loaded and listens for calls. */
  readonly ready: Promise<void>;

  private constructor(
    readonly process: ChildProcess,
    readonly name: string,
  ) {
    let onReady: () => void = () => undefined;
    this.ready = new Promise((resolve) => (onReady = resolve));
    process.on('message', (reply: Reply) => {
      if (reply.id === 0) return onReady();
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if (reply.error !== undefined) waiter.reject(new Error(`${name}: ${reply.error}`));
      else waiter.resolve(reply.result);
    });
    this.exited = new Promise((resolve) =>
      process.on('exit', (code) => {
        for (const waiter of this.pending.values()) waiter.reject(new Error(`${name} exited (${code}) during a call`));
        onReady();
        this.pending.clear();
        resolve(code);
      }),
    );
  }

  static fork(script: string, name: string, options: { env?: NodeJS.ProcessEnv; execArgv?: string[]; logFile?: number } = {}): IpcChild {
    const child = fork(script, [], {
      execArgv: ['--enable-source-maps', ...(options.execArgv ?? [])],
      env: { ...process.env, ...options.env },
      stdio: options.logFile === undefined ? ['ignore', 'inherit', 'inherit', 'ipc'] : ['ignore', options.logFile, options.logFile, 'ipc'],
    });
    return new IpcChild(child, name);
  }

  call<T>(method: string, ...args: unknown[]): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.process.send({ id, method, args } satisfies Request);
    });
  }

  async stop(): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(timer);
  }
}
