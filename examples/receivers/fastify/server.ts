// Fastify receiver: a content-type parser that hands the body over as a Buffer instead of parsing JSON.
import Fastify from 'fastify';
import { listeningLine, listenOptions } from '../shared/listen-options';
import { deliveryReceiver, vectorVerifiers } from '../shared/receive-delivery';
import { runVectorsIfAsked } from '../shared/run-vectors';

async function main(): Promise<void> {
  const { host, port, tls } = listenOptions();
  const receiveDelivery = deliveryReceiver();
  const app = Fastify({ bodyLimit: 1024 * 1024, ...(tls ? { https: tls } : {}) });
  // Keep every body as the raw bytes (parseAs: 'buffer'); parse the JSON yourself after verifying.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
  app.post('/webhooks/funding', async (request, reply) => {
    const header = (name: string) => {
      const value = request.headers[name.toLowerCase()];
      return Array.isArray(value) ? value[0] : value;
    };
    const answer = receiveDelivery(header, Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0));
    return reply.code(answer.status).type('text/plain').send(answer.body);
  });
  await app.listen({ port, host });
  console.log(listeningLine(app.server.address(), Boolean(tls)));
}

if (!runVectorsIfAsked(vectorVerifiers)) void main();
