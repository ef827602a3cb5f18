import { type DynamicModule, Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import type { LogLevel } from '../config/environment-variables';
import { httpLoggerOptions } from './http-logger-options';

/**
 * JSON logs of the standalone service (nestjs-pino): request logs from pino-http, and Nest's own
 * `Logger` once `configureApp` calls `app.useLogger` (NotificationsModule's delivery activity among them).
 * Writes to stdout unless given a destination.
 */
@Module({})
export class LoggingModule {
  static forRoot(level: LogLevel, destination?: DestinationStream): DynamicModule {
    const options = httpLoggerOptions(level);
    return {
      module: LoggingModule,
      imports: [LoggerModule.forRoot({ pinoHttp: destination ? [options, destination] : options })],
    };
  }
}
