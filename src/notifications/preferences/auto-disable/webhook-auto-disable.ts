import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { filter, type Subscription } from 'rxjs';
import { Clock } from '../../clock/clock';
import { type AttemptRecorded, DeliveryEvents } from '../../delivery/delivery-events';
import { DeliveryStatus } from '../../delivery/webhook-delivery.entity';
import { NOTIFICATIONS_OPTIONS } from '../../notifications.module-definition';
import type { NotificationsModuleOptions } from '../../notifications-options.interface';
import { PreferencesService } from '../preferences.service';
import { autoDisableAfter } from './auto-disable-settings';

/**
 * Disables a user's webhook for a type after N of its deliveries in a row ended FAILED (option
 * `autoDisableAfterFailures`, off by default). Listens to finished deliveries and handles them one
 * at a time, in the order they finished; pending deliveries of a disabled type are then cancelled by the worker.
 */
@Injectable()
export class WebhookAutoDisable implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookAutoDisable');
  private readonly disableAfter: number;
  private subscription: Subscription | null = null;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly events: DeliveryEvents,
    private readonly preferences: PreferencesService,
    private readonly clock: Clock,
    @Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions,
  ) {
    this.disableAfter = autoDisableAfter(options);
  }

  onModuleInit(): void {
    if (this.disableAfter === 0) return;
    this.subscription = this.events.attemptRecorded
      .pipe(filter((attempt) => attempt.status === DeliveryStatus.DELIVERED || attempt.status === DeliveryStatus.FAILED))
      .subscribe((attempt) => {
        this.queue = this.queue.then(() => this.record(attempt));
      });
  }

  /** Resolves once every delivery that finished so far is accounted for. */
  idle(): Promise<void> {
    return this.queue;
  }

  async onApplicationShutdown(): Promise<void> {
    this.subscription?.unsubscribe();
    await this.queue;
  }

  private async record({ userId, type, status }: AttemptRecorded): Promise<void> {
    try {
      const policy = { disableAfter: this.disableAfter, now: this.clock.now() };
      const disabled = await this.preferences.recordFinishedDelivery(userId, type, status === DeliveryStatus.DELIVERED, policy);
      if (disabled) this.logger.warn(`Disabled the ${type} webhook of user ${userId} after ${this.disableAfter} consecutive failed deliveries`);
    } catch (error) {
      this.logger.error(`Could not record the ${status} delivery of user ${userId} for ${type}`, (error as Error).stack);
    }
  }
}
