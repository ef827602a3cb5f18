import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import { NOTIFICATIONS_OPTIONS } from '../../notifications.module-definition';
import type { NotificationsModuleOptions } from '../../notifications-options.interface';
import { DeliveryEvents } from './delivery-events.service';
import { DeliveryStatus } from '../entities/webhook-delivery.entity';

/**
 * One log line per delivery attempt, cancellation and busy scheduler run, from {@link DeliveryEvents}, through Nest's
 * `Logger` (context `WebhookDelivery`): the host app's logger, or the standalone service's JSON logger. Each line is an
 * object of fields with its text in `msg`. Ids, outcome and timing only: never the URL (it may carry a token), headers
 * or body. Off with the module option `deliveryLogs: false`.
 */
@Injectable()
export class DeliveryActivityLogger implements OnApplicationShutdown {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly subscriptions: Subscription[] = [];

  constructor(events: DeliveryEvents, @Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions) {
    if (options.deliveryLogs === false) return;
    const logger = this.logger;
    this.subscriptions.push(
      events.attemptRecorded.subscribe(({ deliveryId, eventId, userId, type, attemptNumber, outcome, statusCode, durationMs, status }) => {
        const fields = { deliveryId, eventId, userId, type, attemptNumber, outcome, statusCode, durationMs, status };
        if (outcome === 'success') logger.debug({ msg: 'webhook delivered', ...fields });
        else if (status === DeliveryStatus.FAILED) logger.warn({ msg: 'webhook attempt failed; no retries left', ...fields });
        else logger.warn({ msg: 'webhook attempt failed; will retry', ...fields });
      }),
      events.deliveryCancelled.subscribe((cancelled) => logger.log({ msg: 'webhook delivery cancelled: webhook disabled', ...cancelled })),
      events.schedulerTickFinished.subscribe((tick) => {
        if (tick.claimed > 0) logger.debug({ msg: 'scheduler run claimed due deliveries', ...tick });
      }),
    );
  }

  // Not onModuleDestroy: the worker records its last attempts after that, in beforeApplicationShutdown.
  onApplicationShutdown(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }
}
