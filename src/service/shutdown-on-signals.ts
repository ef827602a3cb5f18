import type { INestApplication, LoggerService } from '@nestjs/common';
import { exitAfterLogs } from './logging/service-logger';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * SIGTERM or SIGINT closes the app (readiness 503, the delivery drain, then HTTP and the database) and exits 0,
 * logging what it does. Unlike Nest's `enableShutdownHooks`, which re-raises the signal once closed, the process
 * ends with `exitAfterLogs`, so the JSON logger's buffered lines (the drain's among them) are written first.
 * A repeated signal changes nothing: Ctrl-C under `npm start` delivers SIGINT twice (from the terminal, and
 * forwarded by npm), and the drain is bounded anyway (`SHUTDOWN_READINESS_DELAY_MS` plus the drain deadline).
 */
export function closeOnSignals(app: INestApplication, logger: LoggerService): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      logger.log(`Received ${signal} again; already stopping`, 'Shutdown');
      return;
    }
    closing = true;
    logger.log(`Received ${signal}; stopping: readiness 503, then draining the deliveries in flight`, 'Shutdown');
    const started = performance.now();
    app.close().then(
      () => {
        logger.log(`Stopped in ${Math.round(performance.now() - started)} ms`, 'Shutdown');
        return exitAfterLogs(0);
      },
      (error: unknown) => {
        logger.error(`Stopping failed: ${(error as Error).stack ?? String(error)}`, undefined, 'Shutdown');
        return exitAfterLogs(1);
      },
    );
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
}
