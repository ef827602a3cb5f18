import { Injectable, Logger } from '@nestjs/common';
import { type Observable, Subject } from 'rxjs';
import type { EventType } from '../../catalog/event-catalog';
import type { AttemptOutcome } from '../http/attempt-result';
import { GuardedStream } from './subscriber-guard';
import type { DeliveryStatus } from '../entities/webhook-delivery.entity';

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
  /** When the attempt started (epoch ms): for a skipped attempt (outcome `circuit_open`), when it was skipped. */
  readonly attemptedAt: number;
  /** The attempt's short error text, as the delivery log stores it (no header values, no bodies); null on success. */
  readonly error: string | null;
  /** Outcome `circuit_open` only: until when the endpoint's circuit is open (epoch ms); else null. */
  readonly circuitOpenUntil: number | null;
  /**
   * The URL the attempt went to (or, skipped, would have gone to): the webhook's URL when its delivery was claimed. It
   * differs from the webhook's URL of now when the user changed it meanwhile; such an attempt is the old URL's, and
   * counts neither for the webhook's health nor for auto-disable.
   */
  readonly webhookUrl: string;
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
  /** Queued attempts skipped (outcome `circuit_open`) when it opened. */
  readonly parked: number;
}

/** Attempts of these deliveries came due while their endpoint's circuit was open: each was recorded as skipped (outcome `circuit_open`, no request). */
export interface DeliveriesParked {
  readonly userId: number;
  readonly count: number;
  readonly until: number;
}

/**
 * How a webhook (a user's event type) is doing, as the settings API reports it: `HEALTHY`; `FAILING` (at least the
 * configured number of attempts in a row failed); `CIRCUIT_OPEN` (its endpoint stopped answering: attempts are skipped
 * until a probe is answered); `DISABLED` (the service turned it off, auto-disable); `OFF` (the user turned it off).
 */
export type WebhookHealthState = 'HEALTHY' | 'FAILING' | 'CIRCUIT_OPEN' | 'DISABLED' | 'OFF';

/**
 * What changed: `became_failing` (the failed attempts in a row reached the threshold), `circuit_opened`,
 * `circuit_closed` (an attempt was answered with a 2xx while the circuit was open), `recovered` (the first 2xx after
 * failing, or a new URL saved for a failing webhook), `disabled` (auto-disable turned the webhook off).
 */
export type WebhookHealthChange = 'became_failing' | 'circuit_opened' | 'circuit_closed' | 'recovered' | 'disabled';

/**
 * A webhook's health changed. Emitted once per change across all instances (by the instance whose write made it),
 * after the change is stored, a moment after the attempt that caused it was recorded.
 */
export interface WebhookHealthChanged {
  readonly userId: number;
  readonly type: EventType;
  readonly change: WebhookHealthChange;
  readonly from: WebhookHealthState;
  readonly to: WebhookHealthState;
  /** When the attempt (or the auto-disable) that made the change happened (epoch ms). */
  readonly at: number;
  readonly failedAttemptsInRow: number;
  /** When the current run of failed attempts began (epoch ms); null when there is none. */
  readonly failingSince: number | null;
  /** Until when the circuit is open (epoch ms), while it is; else null. */
  readonly circuitOpenUntil: number | null;
  /** The last attempt's HTTP status, when one came. */
  readonly lastStatusCode: number | null;
  /** The last attempt's short error text (as the delivery log shows it); null after a success. */
  readonly lastError: string | null;
}

interface DeliveryFacts {
  attemptRecorded: AttemptRecorded;
  deliveryCancelled: DeliveryCancelled;
  schedulerTickFinished: SchedulerTickFinished;
  circuitOpened: CircuitOpened;
  deliveriesParked: DeliveriesParked;
  testSendFinished: TestSendFinished;
  webhookHealthChanged: WebhookHealthChanged;
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
    webhookHealthChanged: new Subject(),
  };

  readonly attemptRecorded: Observable<AttemptRecorded> = this.guarded('attemptRecorded');
  readonly deliveryCancelled: Observable<DeliveryCancelled> = this.guarded('deliveryCancelled');
  readonly schedulerTickFinished: Observable<SchedulerTickFinished> = this.guarded('schedulerTickFinished');
  readonly circuitOpened: Observable<CircuitOpened> = this.guarded('circuitOpened');
  readonly deliveriesParked: Observable<DeliveriesParked> = this.guarded('deliveriesParked');
  readonly testSendFinished: Observable<TestSendFinished> = this.guarded('testSendFinished');
  /** A webhook's health changed (see {@link WebhookHealthChanged}): route it to the user's in-app or e-mail channel. */
  readonly webhookHealthChanged: Observable<WebhookHealthChanged> = this.guarded('webhookHealthChanged');

  private guarded<K extends keyof DeliveryFacts>(name: K): Observable<DeliveryFacts[K]> {
    const subject = this.subjects[name];
    return new GuardedStream(`DeliveryEvents.${name}`, this.logger, (subscriber) => subject.subscribe(subscriber));
  }

  /** @internal Publishes a fact to the subscribers of its stream. */
  emit<K extends keyof DeliveryFacts>(name: K, fact: DeliveryFacts[K]): void {
    this.subjects[name].next(fact);
  }
}
