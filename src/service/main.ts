import { existsSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { configureApp } from './configure-app';
import { DbType, LogLevel, NodeEnv } from './config/environment-variables';
import { type AppConfig, loadAppConfig } from './config/load-app-config';
import { webhookTrustSummary } from './config/webhook-trust';
import { DEFAULT_MYSQL_TUNING } from './database/database-options';
import { DatabaseNotReadyError, preflightMysql } from './database/mysql-preflight';
import { exitAfterLogs, serviceLogger } from './logging/service-logger';
import { closeOnSignals } from './shutdown-on-signals';

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
  // Nest logs written before the JSON logger is installed (the Config warnings) wait for it instead of going to the console.
  Logger.attachBuffer();
  const config = configOrExit();
  const logger = serviceLogger(config.logLevel ?? LogLevel.info);
  Logger.overrideLogger(logger);
  Logger.flush();
  if (!(await databaseReady(config))) await exitAfterLogs(1);
  // Nest's start-up logs wait for the logger with request context that configureApp installs; a failed start is logged by `logger`.
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forConfig(config), {
    bodyParser: false,
    bufferLogs: true,
    logger,
    abortOnError: false,
  });
  configureApp(app, config);
  closeOnSignals(app, logger);
  logWebhookTrust(config);
  await app.listen(config.port);
  new Logger('Bootstrap').log(
    `Listening on http://localhost:${config.port} (${config.database.type}); ${config.apiDocs ? 'API docs at /api/docs' : 'API docs off (API_DOCS)'}, probes at /health/live and /health/ready, metrics at /metrics`,
  );
}

/** MySQL/MariaDB: reachable, and the database exists (created outside production); false after logging one line that says what to do. */
async function databaseReady(config: AppConfig): Promise<boolean> {
  if (config.database.type === DbType.sqlite) return true;
  const logger = new Logger('Database');
  try {
    const { created } = await preflightMysql(config.database.url, {
      connectTimeoutMs: config.database.tuning?.connectTimeoutMs ?? DEFAULT_MYSQL_TUNING.connectTimeoutMs,
      createIfMissing: config.nodeEnv !== NodeEnv.production,
    });
    if (created) logger.log(`Created the database named in DATABASE_URL (it did not exist; NODE_ENV=${config.nodeEnv})`);
    return true;
  } catch (error) {
    if (!(error instanceof DatabaseNotReadyError)) throw error;
    logger.fatal(error.message);
    return false;
  }
}

/** One line each: which non-public ranges webhooks may reach, and which extra CAs their TLS trusts. */
function logWebhookTrust(config: AppConfig): void {
  const production = config.nodeEnv === NodeEnv.production;
  const trust = webhookTrustSummary(config.notifications.allowedCidrs, config.webhookExtraCa, {
    production,
    nodeExtraCaCerts: process.env.NODE_EXTRA_CA_CERTS,
  });
  const logger = new Logger('Config');
  if (trust.warn) logger.warn(trust.allowList);
  else logger.log(trust.allowList);
  logger.log(trust.extraCas);
}

bootstrap().catch((error: unknown) => {
  new Logger('Bootstrap').fatal(`Start failed: ${(error as Error).message}`);
  return exitAfterLogs(1);
});
