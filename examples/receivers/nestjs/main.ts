// NestJS receiver: a raw body parser on the webhook route only, so the controller verifies the bytes as sent and
// parses them itself; every other route keeps Nest's JSON parser.
import 'reflect-metadata';
import { Controller, Inject, Module, Post, Req, Res } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import express, { type Request, type Response } from 'express';
import { listeningLine, listenOptions } from '../shared/listen-options';
import { type DeliveryReceiver, deliveryReceiver, vectorVerifiers } from '../shared/receive-delivery';
import { runVectorsIfAsked } from '../shared/run-vectors';

const DELIVERY_RECEIVER = 'DELIVERY_RECEIVER';

@Controller('webhooks')
class FundingWebhookController {
  constructor(@Inject(DELIVERY_RECEIVER) private readonly receiveDelivery: DeliveryReceiver) {}

  @Post('funding')
  receive(@Req() req: Request, @Res() res: Response): void {
    const rawBody = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0); // a Buffer from express.raw (see main)
    const answer = this.receiveDelivery((name) => req.header(name), rawBody);
    res.status(answer.status).type('text/plain').send(answer.body);
  }
}

@Module({ controllers: [FundingWebhookController], providers: [{ provide: DELIVERY_RECEIVER, useFactory: deliveryReceiver }] })
class ReceiverModule {}

async function main(): Promise<void> {
  const { host, port, tls } = listenOptions();
  const app = await NestFactory.create(ReceiverModule, { logger: ['error'], ...(tls ? { httpsOptions: tls } : {}) });
  // Registered before Nest's own JSON parser, which then leaves this route alone. (`rawBody: true` keeps the bytes
  // too, but Nest's JSON parser would still run first and answer a body that is not JSON before the signature is checked.)
  app.use('/webhooks/funding', express.raw({ type: '*/*', limit: '1mb' }));
  await app.listen(port, host);
  console.log(listeningLine(app.getHttpServer().address(), Boolean(tls)));
}

if (!runVectorsIfAsked(vectorVerifiers)) void main();
