import type { INestApplication, LoggerService } from '@nestjs/common';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/**
 * SIGTERM or SIGINT closes the app (readiness 503, the delivery drain, then HTTP and the database) and exits 0,
 * logging what it does. Unlike Nest's `enableShutdownHooks`, which re-raises the signal once closed, the process
 * ends with `process.exit`, so the JSON logger's buffered lines (the drain's among them) are flushed first.
 * A second signal while closing exits at once, with code 1.
 */
export function closeOnSignals(app: INestApplication, logger: LoggerService): void {
  let closing = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (closing) {
      logger.warn(`Received ${signal} again while stopping; exiting now without waiting for the drain`, 'Shutdown');
      process.exit(1);
    }
    closing = true;
    logger.log(`Received ${signal}; stopping: readiness 503, then draining the deliveries in flight`, 'Shutdown');
    const started = performance.now();
    app.close().then(
      () => {
        logger.log(`Stopped in ${Math.round(performance.now() - started)} ms`, 'Shutdown');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error(`Stopping failed: ${(error as Error).stack ?? String(error)}`, undefined, 'Shutdown');
        process.exit(1);
      },
    );
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
}
