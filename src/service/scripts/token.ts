import { existsSync } from 'node:fs';
import { ConsoleLogger, Logger, type LogLevel } from '@nestjs/common';
import { loadAppConfig } from '../config/load-app-config';
import { parseUserId, signUserToken } from '../../index';

/** Every log line on stderr: stdout carries the token only, so `TOKEN=$(npm run -s token -- 42)` captures nothing else. */
class StderrLogger extends ConsoleLogger {
  protected override printMessages(messages: unknown[], context?: string, logLevel?: LogLevel): void {
    super.printMessages(messages, context, logLevel, 'stderr');
  }
}

Logger.overrideLogger(new StderrLogger());
if (existsSync('.env')) process.loadEnvFile('.env');
const userId = parseUserId(process.argv[2]);
if (userId === undefined) {
  console.error('Usage: npm run token -- <userId>   (a positive integer)');
  process.exit(1);
}
const { jwtSecret, jwtIssuer, jwtAudience } = loadAppConfig().notifications;
console.log(signUserToken(jwtSecret!, userId, undefined, { issuer: jwtIssuer, audience: jwtAudience }));
