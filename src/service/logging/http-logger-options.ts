import type { IncomingMessage, ServerResponse } from 'node:http';
import { stdTimeFunctions } from 'pino';
import type { Options } from 'pino-http';
import type { LogLevel } from '../config/environment-variables';
import { REDACTED_PATHS, redactHeaders, redactQuery, redactUrl } from './redacted-paths';
import { requestId } from './request-id';

// Probes and scrapes arrive every few seconds; a line each would drown the requests that matter. A refused scrape
// (wrong metrics token, 401 or 429) is logged like any other 4xx, as wrong internal tokens are.
const QUIET_PATHS = /^\/health(\/|\?|$)/;
const METRICS_PATH = /^\/metrics(\/|\?|$)/;
// Instances wake each other as often as they publish for one another's users: only a refused wake-up is logged.
const WAKE_PATH = /^\/api\/v1\/internal\/notifications\/wake(\/|\?|$)/;

/** pino-http options of the standalone service: one JSON line per request, carrying its request id. */
export function httpLoggerOptions(level: LogLevel): Options {
  return {
    level,
    timestamp: stdTimeFunctions.isoTime,
    redact: { paths: [...REDACTED_PATHS], censor: '[Redacted]' },
    // Credentials sent as query parameters (`?token=`, `?access_token=`…) are cut from the logged URL.
    serializers: { req: redactRequest },
    genReqId: requestId,
    // Logs written while handling a request carry its `reqId`, not a copy of the whole request.
    quietReqLogger: true,
    autoLogging: { ignore: (request: IncomingMessage) => QUIET_PATHS.test(request.url ?? '') },
    customLogLevel: (request: IncomingMessage, response: ServerResponse, error?: Error) =>
      error || response.statusCode >= 500
        ? 'error'
        : response.statusCode >= 400
          ? 'warn'
          : METRICS_PATH.test(request.url ?? '') || WAKE_PATH.test(request.url ?? '')
            ? 'silent'
            : 'info',
  };
}

/**
 * The request as logged: credential-like query parameters redacted in `url` and in the parsed `query`, and the value of
 * every header not known to be harmless (a credential can arrive under any name a client guesses).
 */
function redactRequest(req: { url?: unknown; query?: unknown; headers?: unknown }): object {
  const query = req.query !== null && typeof req.query === 'object' ? redactQuery(req.query as Record<string, unknown>) : req.query;
  const headers =
    req.headers !== null && typeof req.headers === 'object' ? redactHeaders(req.headers as Record<string, unknown>) : req.headers;
  return { ...req, url: typeof req.url === 'string' ? redactUrl(req.url) : req.url, query, headers };
}
