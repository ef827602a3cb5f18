import { Injectable } from '@nestjs/common';
import { Subject } from 'rxjs';
import type { EventType } from '../catalog/event-catalog';
import type { AttemptOutcome } from './http/attempt-result';
import type { DeliveryStatus } from './webhook-delivery.entity';

/** An attempt was recorded; `status` is the delivery's state after it (PENDING while retries remain). */
export interface AttemptRecorded {
  readonly deliveryId: number;
  readonly eventId: string;
  readonly userId: number;
  readonly type: EventType;
  readonly attemptNumber: number;
  readonly outcome: AttemptOutcome;
  readonly durationMs: number;
  readonly statusCode: number | null;
  readonly status: DeliveryStatus;
}

/** A due delivery ended CANCELLED without a request (the webhook was disabled meanwhile). */
export interface DeliveryCancelled {
  readonly deliveryId: number;
  readonly userId: number;
  readonly type: EventType;
}

/** One scheduler run finished. */
export interface SchedulerTickFinished {
  readonly durationMs: number;
  readonly claimed: number;
}

/**
 * What the delivery side did, as streams, for metrics, auto-disable or a host app's own hooks.
 * Subscribers run synchronously after the fact is committed; they must not throw.
 */
@Injectable()
export class DeliveryEvents {
  readonly attemptRecorded = new Subject<AttemptRecorded>();
  readonly deliveryCancelled = new Subject<DeliveryCancelled>();
  readonly schedulerTickFinished = new Subject<SchedulerTickFinished>();
}
