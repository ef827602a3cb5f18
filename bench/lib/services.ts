import { randomBytes } from 'node:crypto';
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { request } from 'undici';
import { sleep } from './clock';
import { IpcChild } from './ipc';
import { DIST, library } from './library';

const JWT_SECRET = 'bench-jwt-secret-0123456789abcdef0123456789';
/** Production requires user tokens bound to an issuer and an audience. */
const JWT_CLAIMS = { issuer: 'bench', audience: 'notification-webhooks' } as const;
export const INTERNAL_TOKEN = 'bench-internal-token-0123456789abcdef0123456789';
const ENCRYPTION_KEY = `bench:${randomBytes(32).toString('base64')}`;

export interface ServiceEnvInput {
  readonly database: Record<string, string>;
  readonly caFile: string;
  /** DNS servers for webhook host names (`WEBHOOK_DNS_SERVERS`); default: the system's. */
  readonly dnsServers?: readonly string[];
  readonly delivery?: {
    concurrency?: number;
    batchSize?: number;
    leaseMs?: number;
    timeoutMs?: number;
    perEndpointConcurrency?: number;
    circuitFailures?: number;
    circuitCoolDownMs?: number;
  };
  /** Whether the instance says where the others wake it (`DELIVERY_WAKE_URL`, its own port). */
  readonly wakeable?: boolean;
  /** `PROCESS_ROLE`; default `all`. */
  readonly role?: 'all' | 'api' | 'worker';
  /** The service to start (another version's build, say); default this checkout's `dist/service/main.js`. */
  readonly main?: string;
}

/** The `authorization` header of a user of the benched service. */
export function userAuthorization(userId: number): string {
  return `Bearer ${library().signUserToken(JWT_SECRET, userId, undefined, JWT_CLAIMS)}`;
}

/** The environment every instance gets: production mode, loopback receivers allowed, the receiver's CA trusted. */
export function serviceEnv(input: ServiceEnvInput, port: number): NodeJS.ProcessEnv {
  const tuning = input.delivery ?? {};
  const optional = (name: string, value: number | undefined) => (value === undefined ? {} : { [name]: String(value) });
  return {
    PATH: process.env.PATH,
    // Node's own options for every process of our service in the run, e.g. `--max-semi-space-size=16` (docs/benchmarks.md).
    ...(process.env.BENCH_SERVICE_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_SERVICE_NODE_OPTIONS } : {}),
    NODE_ENV: 'production',
    PORT: String(port),
    JWT_SECRET,
    JWT_ISSUER: JWT_CLAIMS.issuer,
    JWT_AUDIENCE: JWT_CLAIMS.audience,
    SECRETS_ENCRYPTION_KEY: ENCRYPTION_KEY,
    INTERNAL_API_TOKEN: INTERNAL_TOKEN,
    WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8',
    // The receivers are on loopback: production mode refuses a private allow-list without this override.
    WEBHOOK_ALLOW_PRIVATE_IN_PRODUCTION: 'i-understand-the-ssrf-risk',
    // The scenarios read /metrics over loopback, unauthenticated.
    METRICS_OPEN_IN_PRODUCTION: 'i-understand-metrics-are-open',
    WEBHOOK_EXTRA_CA_FILE: input.caFile,
    ...input.database,
    ...(input.dnsServers ? { WEBHOOK_DNS_SERVERS: input.dnsServers.join(',') } : {}),
    ...optional('DELIVERY_CONCURRENCY', tuning.concurrency),
    ...optional('DELIVERY_BATCH_SIZE', tuning.batchSize),
    ...optional('DELIVERY_LEASE_MS', tuning.leaseMs),
    ...optional('DELIVERY_TIMEOUT_MS', tuning.timeoutMs),
    ...optional('DELIVERY_PER_ENDPOINT_CONCURRENCY', tuning.perEndpointConcurrency),
    ...optional('DELIVERY_CIRCUIT_FAILURES', tuning.circuitFailures),
    ...optional('DELIVERY_CIRCUIT_COOL_DOWN_MS', tuning.circuitCoolDownMs),
    ...(input.role ? { PROCESS_ROLE: input.role } : {}),
    ...(input.wakeable ? { DELIVERY_WAKE_URL: `http://127.0.0.1:${port}/api/v1/internal/notifications/wake` } : {}),
  };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** Resolves once the service answers HTTP (any status); fails if the process exits first. */
export async function waitForHttp(base: string, exited: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited()) throw new Error(`service at ${base} exited during start-up`);
    try {
      const response = await request(`${base}/api/v1/settings/notifications`);
      await response.body.dump();
      return;
    } catch {
      await sleep(200);
    }
  }
  throw new Error(`service at ${base} did not answer within ${timeoutMs} ms`);
}

/** How long an IPC service may take to close gracefully before it is signalled. */
const CLOSE_TIMEOUT_MS = 30_000;

export interface IpcService {
  readonly ipc: IpcChild;
  readonly base: string;
  stop(): Promise<void>;
}

/** The AppModule in a child process driven over IPC (publisher, scheduler ticks, memory, CPU profile). */
export async function startIpcService(input: ServiceEnvInput, logDir: string, label: string): Promise<IpcService> {
  const port = await freePort();
  const log = openSync(join(logDir, `${label}.log`), 'a');
  const ipc = IpcChild.fork(resolve(__dirname, 'service-process.js'), label, { env: serviceEnv(input, port), logFile: log });
  let exited = false;
  void ipc.exited.then(() => (exited = true));
  await ipc.ready;
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(base, () => exited);
  return {
    ipc,
    base,
    async stop() {
      // Bounded: a service stuck on a backlog (or on attempts a receiver never answers) is then killed.
      if (!exited) await Promise.race([ipc.call('close').catch(() => undefined), sleep(CLOSE_TIMEOUT_MS)]);
      await ipc.stop();
    },
  };
}

export interface MainProcess {
  readonly child: ChildProcess;
  readonly base: string;
  readonly exited: Promise<void>;
  /** SIGTERM (graceful) and wait; SIGKILL after 20 s. */
  stop(): Promise<void>;
  kill9(): Promise<void>;
}

/** The last lines a service wrote to its log: what a start-up failure reports. */
function logTail(file: string, lines = 15): string {
  return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
}

/** How many fresh ports a start-up may try: a port picked by `freePort` can be taken (by another process's outgoing connection) before the service binds it. */
const PORT_TRIES = 3;

/**
 * `node dist/service/main.js` processes not yet exited: killed when the bench itself exits without stopping them (an error,
 * a closed stdout; Ctrl-C reaches them itself), so that none outlives it and loads the next run (its IPC children end with their channel).
 */
const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((child) => child.kill('SIGKILL')));

/** `node dist/service/main.js`, the standalone service exactly as deployed, in a scratch working directory. */
export async function startMainProcess(input: ServiceEnvInput, logDir: string, label: string, port?: number): Promise<MainProcess> {
  const logFile = join(logDir, `${label}.log`);
  for (let attempt = 1; ; attempt++) {
    const chosenPort = port ?? (await freePort());
    const log = openSync(logFile, 'a');
    const child = spawn(process.execPath, [input.main ?? join(DIST, 'service', 'main.js')], {
      cwd: logDir,
      env: serviceEnv(input, chosenPort),
      stdio: ['ignore', log, log],
    });
    closeSync(log);
    running.add(child);
    let hasExited = false;
    const exited = new Promise<void>((done) => child.on('exit', () => (running.delete(child), (hasExited = true), done())));
    const base = `http://127.0.0.1:${chosenPort}`;
    try {
      await waitForHttp(base, () => hasExited);
    } catch (error) {
      const tail = logTail(logFile);
      if (hasExited && port === undefined && attempt < PORT_TRIES && tail.includes('EADDRINUSE')) continue;
      throw new Error(`${(error as Error).message}; the end of ${logFile}:\n${tail}`, { cause: error });
    }
    const signal = async (name: NodeJS.Signals) => {
      if (hasExited) return;
      child.kill(name);
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    };
    return { child, base, exited, stop: () => signal('SIGTERM'), kill9: () => signal('SIGKILL') };
  }
}
