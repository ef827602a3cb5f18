import { once } from 'node:events';
import { createServer } from 'node:net';

/**
 * Ports handed out lie below the kernel's ephemeral range (32768 and up on Linux), which a port 0 listen and every
 * outgoing connection (to the database, a receiver) take theirs from: one taken there between this check and the
 * caller's listen would answer EADDRINUSE. Each test worker has its own block of them.
 */
const FIRST_PORT = 20_000;
const PORTS_PER_WORKER = 1_000;
const WORKER_BLOCKS = 12;
let handedOut = 0;

/** A port free on 127.0.0.1 right now, for a process (or an instance's wake URL) that takes its port from its settings. */
export async function freePort(): Promise<number> {
  const worker = Number(process.env.VITEST_POOL_ID ?? 1) - 1;
  const first = FIRST_PORT + (worker % WORKER_BLOCKS) * PORTS_PER_WORKER;
  for (let tries = 0; tries < PORTS_PER_WORKER; tries++) {
    const port = first + (handedOut++ % PORTS_PER_WORKER);
    if (await isFree(port)) return port;
  }
  throw new Error(`No free port in ${first}-${first + PORTS_PER_WORKER - 1} on 127.0.0.1`);
}

async function isFree(port: number): Promise<boolean> {
  const server = createServer();
  const listening = once(server, 'listening').then(
    () => true,
    () => false, // EADDRINUSE, or EACCES
  );
  server.listen(port, '127.0.0.1');
  const free = await listening;
  if (free) {
    server.close();
    await once(server, 'close');
  }
  return free;
}
