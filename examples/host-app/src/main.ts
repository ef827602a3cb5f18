import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { hostConfigFromEnv } from './host-config';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule.forRoot(hostConfigFromEnv()));
  app.enableShutdownHooks();
  await app.listen(Number(process.env.PORT ?? 3000));
}

void bootstrap();
