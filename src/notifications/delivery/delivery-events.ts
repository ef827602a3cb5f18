import { Injectable, Logger } from '@nestjs/common';
import { type Observable, Subject } from 'rxjs';
import type { EventType } from '../catalog/event-catalog';
import type { AttemptOutcome } from './http/attempt-result';
import { GuardedStream } from './subscriber-guard';
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

/** A test send (not a delivery: not stored, not retried) got its answer. */
export interface TestSendFinished {
  readonly userId: number;
  readonly type: EventType;
  readonly outcome: AttemptOutcome;
  readonly durationMs: number;
}

/** One scheduler run finished. */
export interface SchedulerTickFinished {
  readonly durationMs: number;
  readonly claimed: number;
}

/** An endpoint stopped answering: its circuit opened in this instance and its deliveries wait in the outbox. */
export interface CircuitOpened {
  readonly userId: number;
  /** The endpoint's host (name and port); never its path, which may carry a token. */
  readonly host: string;
  /** When a probe attempt may go again (epoch ms). */
  readonly until: number;
  /** Deliveries parked until then. */
  readonly parked: number;
}

/** Deliveries were parked (not attempted, not failed) until their endpoint's circuit lets a probe through. */
export interface DeliveriesParked {
  readonly userId: number;
  readonly count: number;
  readonly until: number;
}

interface DeliveryFacts {
  attemptRecorded: AttemptRecorded;
  deliveryCancelled: DeliveryCancelled;
  schedulerTickFinished: SchedulerTickFinished;
  circuitOpened: CircuitOpened;
  deliveriesParked: DeliveriesParked;
  testSendFinished: TestSendFinished;
}

/**
 * What the delivery side did, as read-only streams, for metrics, auto-disable or a host app's own hooks.
 * Subscribers run synchronously after the fact is committed. One that throws (or leaves an error of its pipe
 * unhandled) is logged once, at error level with the context `DeliveryEvents`, and stays subscribed; delivery goes on.
 *
 * @publicApi
 */
@Injectable()
export class DeliveryEvents {
  private readonly logger = new Logger(DeliveryEvents.name);
  private readonly subjects: { [K in keyof DeliveryFacts]: Subject<DeliveryFacts[K]> } = {
    attemptRecorded: new Subject(),
    deliveryCancelled: new Subject(),
    schedulerTickFinished: new Subject(),
    circuitOpened: new Subject(),
    deliveriesParked: new Subject(),
    testSendFinished: new Subject(),
  };

  readonly attemptRecorded: Observable<AttemptRecorded> = this.guarded('attemptRecorded');
  readonly deliveryCancelled: Observable<DeliveryCancelled> = this.guarded('deliveryCancelled');
  readonly schedulerTickFinished: Observable<SchedulerTickFinished> = this.guarded('schedulerTickFinished');
  readonly circuitOpened: Observable<CircuitOpened> = this.guarded('circuitOpened');
  readonly deliveriesParked: Observable<DeliveriesParked> = this.guarded('deliveriesParked');
  readonly testSendFinished: Observable<TestSendFinished> = this.guarded('testSendFinished');

  private guarded<K extends keyof DeliveryFacts>(name: K): Observable<DeliveryFacts[K]> {
    const subject = this.subjects[name];
    return new GuardedStream(`DeliveryEvents.${name}`, this.logger, (subscriber) => subject.subscribe(subscriber));
  }

  /** @internal Publishes a fact to the subscribers of its stream. */
  emit<K extends keyof DeliveryFacts>(name: K, fact: DeliveryFacts[K]): void {
    this.subjects[name].next(fact);
  }
}
