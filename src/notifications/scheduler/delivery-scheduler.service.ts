import { Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { Clock } from '../clock/clock';
import { DeliveryEvents } from '../delivery/events/delivery-events.service';
import { OutboxEngine } from '../delivery/engine/outbox-engine.service';

/** Every minute (spec 6.3), claims due retries in batches and attempts them; one run at a time per instance. */
@Injectable()
export class DeliveryScheduler {
  private running: Promise<number> | null = null;

  constructor(
    private readonly engine: OutboxEngine,
    private readonly events: DeliveryEvents,
    private readonly clock: Clock,
  ) {}

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
    const startedAt = this.clock.now();
    const claimed = await this.engine.drain();
    this.events.emit('schedulerTickFinished', { durationMs: this.clock.now() - startedAt, claimed });
    await this.engine.watchLeases();
    return claimed;
  }
}
