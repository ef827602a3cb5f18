import type { EventEmitter } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { Logger, PinoLogger } from 'nestjs-pino';
import { symbols } from 'pino';
import type { LogLevel } from '../config/environment-variables';
import { httpLoggerOptions } from './http-logger-options';

/** How long an exit waits for the log lines still buffered to be written. */
const FLUSH_DEADLINE_MS = 2_000;

/**
 * The service's JSON logger before the Nest app exists (start-up, a database that is not ready, a failed
 * bootstrap): the same pino root logger that LoggingModule uses once the app runs, so every line is JSON.
 */
export function serviceLogger(level: LogLevel): Logger {
  return new Logger(new PinoLogger({ pinoHttp: httpLoggerOptions(level) }), {});
}

/** pino's destination (sonic-boom): `_writing` while an asynchronous write is under way. */
type Destination = EventEmitter & { readonly _writing?: boolean };

/**
 * Waits until the log lines written so far have reached stdout (at most 2 s), then exits. Waiting matters when
 * stdout is a pipe whose reader is gone: the pending write fails with EPIPE and pino then stops writing, whereas
 * on `exit` pino flushes synchronously and sonic-boom 4 retries a failed write there for ever (EPIPE included):
 * the process hung on SIGTERM. (`logger.flush()` does not wait: it returns at once without a minimum length.)
 */
export async function exitAfterLogs(code: number): Promise<never> {
  const destination = (PinoLogger.root as unknown as Record<symbol, Destination>)[symbols.streamSym];
  if (destination._writing) {
    const settled = new Promise((resolve) => {
      destination.once('drain', resolve);
      destination.once('error', resolve);
    });
    await Promise.race([settled, delay(FLUSH_DEADLINE_MS, undefined, { ref: false })]);
  }
  process.exit(code);
}
