import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';

export const SHUTDOWN_READINESS_DELAY_MS = Symbol('SHUTDOWN_READINESS_DELAY_MS');

/**
 * Turns true as soon as Nest starts shutting down. Nest 12 runs every `onModuleDestroy`, then every
 * `beforeApplicationShutdown` (the delivery workers' drain), then closes the HTTP server: flipping in
 * the first hook makes readiness fail during the drain, and the optional delay keeps the service
 * fully working, but unready, until load balancers have stopped routing to it.
 */
@Injectable()
export class ShutdownState implements OnModuleDestroy {
  private shuttingDown = false;

  constructor(@Inject(SHUTDOWN_READINESS_DELAY_MS) private readonly delayMs: number) {}

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  async onModuleDestroy(): Promise<void> {
    this.shuttingDown = true;
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
  }
}
