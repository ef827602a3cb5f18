import { Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { DeliveryWorker } from '../delivery/delivery-worker';

/** Every minute (spec 6.3), claims due retries in batches and attempts them; one run at a time per instance. */
@Injectable()
export class DeliveryScheduler {
  private running: Promise<number> | null = null;

  constructor(private readonly worker: DeliveryWorker) {}

  @Cron(CronExpression.EVERY_MINUTE, { name: 'webhook-delivery-retries' })
  async onMinute(): Promise<void> {
    await this.tick();
  }

  /** Drains what is due now; returns how many deliveries were attempted. A call during a run joins it. */
  tick(): Promise<number> {
    this.running ??= this.drain().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const claimed = await this.worker.attemptDueBatch();
      total += claimed;
      if (claimed < this.worker.batchSize) return total;
    }
  }
}
