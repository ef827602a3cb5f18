// Not part of a Next.js app: a tiny Node adapter that serves the route handler the way Next.js calls it
// (a Web Request in, a Web Response out), so the example runs here without Next.js. `--vectors <file>` runs the
// conformance vectors through the route's verifySignature, verifyStandardWebhook and verifyEd25519.
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { listeningLine, listenOptions } from '../shared/listen-options';
import { atClock, runVectorsIfAsked } from '../shared/run-vectors';
import { POST, verifyEd25519, verifySignature, verifyStandardWebhook } from './app/api/webhooks/route';

const ROUTE = '/api/webhooks';

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  if (req.method !== 'POST' || req.url !== ROUTE) {
    res.writeHead(404).end();
    return;
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  const response = await POST(
    new Request(`https://${req.headers.host}${req.url}`, { method: 'POST', headers, body: Buffer.concat(chunks) }),
  );
  res.writeHead(response.status, Object.fromEntries(response.headers)).end(Buffer.from(await response.arrayBuffer()));
}

function main(): void {
  const { host, port, tls } = listenOptions();
  const listener = (req: IncomingMessage, res: ServerResponse) => void handle(req, res).catch(() => res.writeHead(500).end());
  const server = tls ? createHttpsServer(tls, listener) : createHttpServer(listener);
  server.listen(port, host, () => console.log(listeningLine(server.address(), Boolean(tls))));
}

const ranVectors = runVectorsIfAsked({
  'x-service': (vector, rawBody) =>
    verifySignature(
      vector.secret,
      vector.headers['X-Service-Timestamp'] ?? null,
      vector.headers['X-Service-Signature'] ?? null,
      rawBody,
      vector.now,
      vector.toleranceSeconds,
    ),
  'standard-webhooks': (vector, rawBody) =>
    atClock(vector, () => {
      const headers = new Headers();
      for (const [name, value] of Object.entries(vector.headers)) if (value !== undefined) headers.set(name, value);
      return verifyStandardWebhook(vector.secret, headers, rawBody);
    }),
  ed25519: (vector, rawBody) => {
    const headers = new Headers();
    for (const [name, value] of Object.entries(vector.headers)) if (value !== undefined) headers.set(name, value);
    return verifyEd25519(vector.publicKey, headers, rawBody, vector.now, vector.toleranceSeconds);
  },
});
if (!ranVectors) main();
