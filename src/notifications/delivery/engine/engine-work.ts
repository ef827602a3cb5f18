import { Logger } from '@nestjs/common';

/**
 * The run state one engine's parts share: whether this process delivers at all (not in an `api` process), whether it
 * is stopping, and the work it started and has not seen end (drains, attempts, records, what timers start). Every part
 * tracks what it starts here, so a failure is logged (never an unhandled rejection, which ends the process) and
 * `idle()` and shutdown can wait for all of it.
 */
export class EngineWork {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly tracked = new Set<Promise<unknown>>();
  stopping = false;

  /** `delivers`: false in an `api` process, which stores deliveries for the worker processes and never attempts or claims any. */
  constructor(readonly delivers: boolean) {}

  /** How many tracked promises have not settled yet. */
  get running(): number {
    return this.tracked.size;
  }

  /** Resolves when the work tracked so far has settled (work it starts meanwhile may still run). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.tracked]);
  }

  track<T>(work: Promise<T>): Promise<T> {
    this.tracked.add(work);
    void work
      .catch((error: unknown) => this.logger.error('Delivery work failed', (error as Error).stack))
      .finally(() => this.tracked.delete(work));
    return work;
  }
}
