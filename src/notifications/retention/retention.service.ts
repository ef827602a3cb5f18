import { Inject, Injectable, Logger } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import { Clock } from '../clock/clock';
import { DeliveryStatus } from '../delivery/entities/webhook-delivery.entity';
import { IdempotencyKeyRepository } from '../delivery/publishing/idempotency/idempotency-key.repository';
import { IDEMPOTENCY_WINDOW_MS } from '../delivery/publishing/idempotency/idempotency-window';
import { DeliveryPurge } from './delivery-purge';
import { RETENTION_SETTINGS, type RetentionSettings } from './retention-settings';

/** What one purge deleted. */
export interface RetentionReport {
  readonly delivered: number;
  readonly cancelled: number;
  readonly failed: number;
  /** Attempts of the deleted deliveries. */
  readonly attempts: number;
  /** Events left without any delivery. */
  readonly events: number;
  /** Publish idempotency keys past their window. */
  readonly idempotencyKeys: number;
}

/**
 * Deletes finished deliveries once they are older than the configured retention (by last update):
 * DELIVERED and CANCELLED after 30 days, FAILED after 90 by default, with their attempts and events; and the
 * publish idempotency keys once their window (24 h by default) has passed.
 *
 * @publicApi
 */
@Injectable()
export class RetentionService {
  private readonly logger = new Logger('WebhookRetention');
  private running: Promise<RetentionReport> | null = null;

  constructor(
    private readonly deliveries: DeliveryPurge,
    private readonly clock: Clock,
    @Inject(RETENTION_SETTINGS) private readonly settings: RetentionSettings,
    private readonly keys: IdempotencyKeyRepository,
    @Inject(IDEMPOTENCY_WINDOW_MS) private readonly keyWindowMs: number,
  ) {}

  @Cron(CronExpression.EVERY_DAY_AT_3AM, { name: 'webhook-delivery-retention' })
  async onSchedule(): Promise<void> {
    try {
      const report = await this.purge();
      this.logger.log(
        `Deleted ${report.delivered} delivered, ${report.cancelled} cancelled and ${report.failed} failed deliveries, ${report.attempts} attempts, ${report.events} events and ${report.idempotencyKeys} idempotency keys`,
      );
    } catch (error) {
      this.logger.error('Retention run failed', (error as Error).stack);
    }
  }

  /** Deletes everything past retention now, batch by batch; a call during a run joins it. */
  purge(): Promise<RetentionReport> {
    this.running ??= this.run().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async run(): Promise<RetentionReport> {
    const now = this.clock.now();
    const delivered = await this.purgeStatus(DeliveryStatus.DELIVERED, now - this.settings.deliveredMs);
    const cancelled = await this.purgeStatus(DeliveryStatus.CANCELLED, now - this.settings.deliveredMs);
    const failed = await this.purgeStatus(DeliveryStatus.FAILED, now - this.settings.failedMs);
    const idempotencyKeys = await this.purgeKeys(now - this.keyWindowMs);
    return {
      delivered: delivered.deliveries,
      cancelled: cancelled.deliveries,
      failed: failed.deliveries,
      attempts: delivered.attempts + cancelled.attempts + failed.attempts,
      events: delivered.events + cancelled.events + failed.events,
      idempotencyKeys,
    };
  }

  private async purgeKeys(before: number): Promise<number> {
    let total = 0;
    for (;;) {
      const batch = await this.keys.purgeBefore(before, this.settings.batchSize);
      total += batch.deleted;
      if (batch.matched < this.settings.batchSize) return total;
    }
  }

  private async purgeStatus(status: DeliveryStatus, before: number): Promise<{ deliveries: number; attempts: number; events: number }> {
    const total = { deliveries: 0, attempts: 0, events: 0 };
    for (;;) {
      const batch = await this.deliveries.purgeBatch(status, before, this.settings.batchSize);
      total.deliveries += batch.deliveries;
      total.attempts += batch.attempts;
      total.events += batch.events;
      if (batch.matched < this.settings.batchSize) return total;
    }
  }
}
