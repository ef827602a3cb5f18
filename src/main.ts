import { existsSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { configureApp } from './configure-app';
import { NodeEnv } from './config/environment-variables';
import { type AppConfig, loadAppConfig } from './config/load-app-config';
import { webhookTrustSummary } from './config/webhook-trust';

function configOrExit(): AppConfig {
  if (existsSync('.env')) process.loadEnvFile('.env');
  try {
    return loadAppConfig();
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}

async function bootstrap(): Promise<void> {
  const config = configOrExit();
  // Nest's start-up logs wait for the JSON logger that configureApp installs.
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forConfig(config), { bodyParser: false, bufferLogs: true });
  configureApp(app, config);
  logWebhookTrust(config);
  await app.listen(config.port);
  new Logger('Bootstrap').log(
    `Listening on http://localhost:${config.port} (${config.database.type}); API docs at /api/docs, probes at /health/live and /health/ready, metrics at /metrics`,
  );
}

/** One line each: which non-public ranges webhooks may reach, and which extra CAs their TLS trusts. */
function logWebhookTrust(config: AppConfig): void {
  const production = config.nodeEnv === NodeEnv.production;
  const trust = webhookTrustSummary(config.webhookAllowedCidrs, config.webhookExtraCa, {
    production,
    nodeExtraCaCerts: process.env.NODE_EXTRA_CA_CERTS,
  });
  const logger = new Logger('Config');
  if (trust.warn) logger.warn(trust.allowList);
  else logger.log(trust.allowList);
  logger.log(trust.extraCas);
}

void bootstrap();
