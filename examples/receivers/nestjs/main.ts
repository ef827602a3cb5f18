// NestJS receiver: rawBody: true keeps req.rawBody (a Buffer) next to the parsed body; verify over rawBody only.
import 'reflect-metadata';
import { Controller, Headers, Module, Post, Req, Res, type RawBodyRequest } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Request, Response } from 'express';
import { listeningLine, listenOptions } from '../shared/listen-options';
import { receiveDelivery, verifyVector } from '../shared/receive-delivery';
import { runVectorsIfAsked } from '../shared/run-vectors';

@Controller('webhooks')
class FundingWebhookController {
  @Post('funding')
  receive(@Req() req: RawBodyRequest<Request>, @Headers() headers: Record<string, string | undefined>, @Res() res: Response): void {
    const answer = receiveDelivery((name) => headers[name.toLowerCase()], req.rawBody ?? Buffer.alloc(0));
    res.status(answer.status).type('text/plain').send(answer.body);
  }
}

@Module({ controllers: [FundingWebhookController] })
class ReceiverModule {}

async function main(): Promise<void> {
  const { port, tls } = listenOptions();
  const app = await NestFactory.create(ReceiverModule, { rawBody: true, logger: ['error'], ...(tls ? { httpsOptions: tls } : {}) });
  await app.listen(port, '0.0.0.0');
  console.log(listeningLine(port, Boolean(tls)));
}

if (!runVectorsIfAsked(verifyVector)) void main();
