// Express receiver: express.raw keeps the body as a Buffer, so the signature is checked over the bytes as sent.
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import express from 'express';
import { listeningLine, listenOptions } from '../shared/listen-options';
import { deliveryReceiver, vectorVerifiers } from '../shared/receive-delivery';
import { runVectorsIfAsked } from '../shared/run-vectors';

function main(): void {
  const { host, port, tls } = listenOptions();
  const receiveDelivery = deliveryReceiver();
  const app = express();
  // Only on this route, and before any JSON parser: a parsed and re-serialized body would not verify.
  app.post('/webhooks/funding', express.raw({ type: '*/*', limit: '1mb' }), (req, res) => {
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = receiveDelivery((name) => req.header(name), rawBody);
    res.status(answer.status).type('text/plain').send(answer.body);
  });
  const server = tls ? createHttpsServer(tls, app) : createHttpServer(app);
  server.listen(port, host, () => console.log(listeningLine(server.address(), Boolean(tls))));
}

if (!runVectorsIfAsked(vectorVerifiers)) main();
