import type { IncomingMessage, ServerResponse } from 'node:http';
import { stdTimeFunctions } from 'pino';
import type { Options } from 'pino-http';
import type { LogLevel } from '../config/app-config';
import { REDACTED_PATHS } from './redacted-paths';
import { requestId } from './request-id';

// Probes and scrapes arrive every few seconds; a line each would drown the requests that matter.
const QUIET_PATHS = /^\/(health|metrics)(\/|\?|$)/;

/** pino-http options of the standalone service: one JSON line per request, carrying its request id. */
export function httpLoggerOptions(level: LogLevel): Options {
  return {
    level,
    timestamp: stdTimeFunctions.isoTime,
    redact: { paths: [...REDACTED_PATHS], censor: '[Redacted]' },
    genReqId: requestId,
    // Logs written while handling a request carry its `reqId`, not a copy of the whole request.
    quietReqLogger: true,
    autoLogging: { ignore: (request: IncomingMessage) => QUIET_PATHS.test(request.url ?? '') },
    customLogLevel: (_request: IncomingMessage, response: ServerResponse, error?: Error) =>
      error || response.statusCode >= 500 ? 'error' : response.statusCode >= 400 ? 'warn' : 'info',
  };
}
