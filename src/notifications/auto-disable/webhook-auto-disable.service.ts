import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { filter, type Subscription } from 'rxjs';
import { Clock } from '../clock/clock';
import { GroupCommit } from '../common/concurrency/group-commit';
import { type AttemptRecorded, DeliveryEvents } from '../delivery/events/delivery-events.service';
import { DeliveryStatus } from '../delivery/entities/webhook-delivery.entity';
import { WebhookHealthRecorder } from '../webhook-health/webhook-health-recorder.service';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { PreferencesService } from '../preferences/preferences.service';
import { autoDisableAfter } from './auto-disable-settings';
import { foldFinished } from '../preferences/finished-runs';

const MAX_BATCH = 500;

/**
 * Disables a user's webhook for a type after N of its deliveries in a row ended FAILED (option
 * `autoDisableAfterFailures`, off by default), each counted only while the webhook still has the URL its last
 * attempt went to. Listens to finished deliveries and accounts for them in
 * batches, in the order they finished: those that finish while a batch is written go into the next,
 * so a busy worker pays a few writes per batch rather than one per delivery. Pending deliveries of a
 * disabled type are then cancelled by the worker.
 */
@Injectable()
export class WebhookAutoDisable implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookAutoDisable');
  private readonly disableAfter: number;
  private readonly finished = new GroupCommit<AttemptRecorded, void>((batch) => this.record(batch), { maxGroupSize: MAX_BATCH });
  private subscription: Subscription | null = null;

  constructor(
    private readonly events: DeliveryEvents,
    private readonly preferences: PreferencesService,
    private readonly clock: Clock,
    private readonly health: WebhookHealthRecorder,
    @Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions,
  ) {
    this.disableAfter = autoDisableAfter(options);
  }

  onModuleInit(): void {
    if (this.disableAfter === 0) return;
    this.subscription = this.events.attemptRecorded
      .pipe(filter((attempt) => attempt.status === DeliveryStatus.DELIVERED || attempt.status === DeliveryStatus.FAILED))
      .subscribe((attempt) => void this.finished.submit(attempt));
  }

  /** Resolves once every delivery that finished so far is accounted for. */
  idle(): Promise<void> {
    return this.finished.idle();
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscription?.unsubscribe();
    await this.finished.idle();
  }

  // Never throws: a batch that cannot be written is logged and not retried, so no failure is counted twice.
  private async record(batch: AttemptRecorded[]): Promise<void[]> {
    try {
      const runs = foldFinished(
        batch.map(({ userId, type, status, webhookUrl }) => ({ userId, type, webhookUrl, delivered: status === DeliveryStatus.DELIVERED })),
      );
      const now = this.clock.now();
      const disabled = await this.preferences.recordFinishedRuns(runs, { disableAfter: this.disableAfter, now });
      for (const { userId, type, failures } of disabled) {
        this.logger.warn(`Disabled the ${type} webhook of user ${userId} after ${failures} consecutive failed deliveries`);
        void this.health.disabled(userId, type, now);
      }
    } catch (error) {
      this.logger.error(`Could not account for ${batch.length} finished deliveries`, (error as Error).stack);
    }
    return batch.map(() => undefined);
  }
}
