import { Logger, PinoLogger } from 'nestjs-pino';
import type { LogLevel } from '../config/app-config';
import { httpLoggerOptions } from './http-logger-options';

/**
 * The service's JSON logger before the Nest app exists (start-up, a database that is not ready, a failed
 * bootstrap): the same pino root logger that LoggingModule uses once the app runs, so every line is JSON.
 */
export function serviceLogger(level: LogLevel): Logger {
  return new Logger(new PinoLogger({ pinoHttp: httpLoggerOptions(level) }), {});
}
