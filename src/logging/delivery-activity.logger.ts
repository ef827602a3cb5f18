import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import type { Subscription } from 'rxjs';
import { DeliveryEvents } from '../notifications/delivery/delivery-events';
import { DeliveryStatus } from '../notifications/delivery/webhook-delivery.entity';

/**
 * One log line per delivery attempt, cancellation and busy scheduler run, from {@link DeliveryEvents}.
 * Ids, outcome and timing only: never the URL (it may carry a token), headers or body.
 */
@Injectable()
export class DeliveryActivityLogger implements OnApplicationShutdown {
  private readonly subscriptions: Subscription[];

  constructor(events: DeliveryEvents, logger: PinoLogger) {
    logger.setContext('WebhookDelivery');
    this.subscriptions = [
      events.attemptRecorded.subscribe(({ deliveryId, eventId, userId, type, attemptNumber, outcome, statusCode, durationMs, status }) => {
        const fields = { deliveryId, eventId, userId, type, attemptNumber, outcome, statusCode, durationMs, status };
        if (outcome === 'success') logger.debug(fields, 'webhook delivered');
        else if (status === DeliveryStatus.FAILED) logger.warn(fields, 'webhook attempt failed; no retries left');
        else logger.warn(fields, 'webhook attempt failed; will retry');
      }),
      events.deliveryCancelled.subscribe((cancelled) => logger.info(cancelled, 'webhook delivery cancelled: webhook disabled')),
      events.schedulerTickFinished.subscribe((tick) => {
        if (tick.claimed > 0) logger.debug(tick, 'scheduler run claimed due deliveries');
      }),
    ];
  }

  // Not onModuleDestroy: the worker records its last attempts after that, in beforeApplicationShutdown.
  onApplicationShutdown(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }
}
