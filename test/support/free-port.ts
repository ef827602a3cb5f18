import { once } from 'node:events';
import { createServer } from 'node:net';

/** A port free on 127.0.0.1 right now, for a process (or an instance's wake URL) that takes its port from its settings. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
