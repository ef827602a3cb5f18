import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Subscription } from 'rxjs';
import { Clock } from '../clock/clock';
import { DeliveryEvents } from '../delivery/events/delivery-events.service';
import { OutboxEngine } from '../delivery/engine/outbox-engine.service';
import { ATTEMPT_OUTCOMES } from '../delivery/http/attempt-result';
import { PARTITION_COUNT } from '../delivery/partitions/partitions';
import { DeliveryStatus } from '../delivery/entities/webhook-delivery.entity';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { QueueDepthReader } from './queue-depth';

const FINAL_STATES = [DeliveryStatus.DELIVERED, DeliveryStatus.FAILED, DeliveryStatus.CANCELLED] as const;
const QUEUE_STATES = ['due', 'in_flight', 'failed'] as const;
/** A gauge reads at most this many rows per state; it saturates there, far above any alert threshold. */
export const QUEUE_DEPTH_CAP = 100_000;
/**
 * The queue depth is counted at most once in this long (on the module's clock), whatever the scrape rate: scrapes within
 * it, and scrapes while a count runs, share one count. Far below Prometheus's usual 15–60 s scrape interval.
 */
export const QUEUE_DEPTH_INTERVAL_MS = 5000;

type QueueDepthValues = Record<(typeof QUEUE_STATES)[number], number>;
// Attempts end by the 5 s deadline; timed-out ones land just above 5, in the 6 s bucket.
const ATTEMPT_SECONDS_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 5, 6];
const TICK_SECONDS_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

const NAMES = {
  attempts: 'webhook_attempts_total',
  attemptSeconds: 'webhook_attempt_duration_seconds',
  finished: 'webhook_deliveries_finished_total',
  tickSeconds: 'webhook_scheduler_tick_duration_seconds',
  claimed: 'webhook_scheduler_claimed_total',
  queueDepth: 'webhook_queue_depth',
  circuitsOpen: 'webhook_circuits_open',
  partitionsOwned: 'webhook_partitions_owned',
  leasesHeld: 'webhook_leases_held',
  circuitsOpened: 'webhook_circuits_opened_total',
  skipped: 'webhook_deliveries_parked_total',
  testSends: 'webhook_test_sends_total',
  healthTransitions: 'webhook_health_transitions_total',
} as const;
const HEALTH_TRANSITION_TARGETS = ['HEALTHY', 'FAILING', 'CIRCUIT_OPEN', 'DISABLED'] as const;

/**
 * The `webhook_*` Prometheus metrics, fed by {@link DeliveryEvents}; queue depth is counted from the
 * database at scrape time. Registered on `metricsRegistry` if given, else on {@link registry} of its own.
 *
 * @publicApi
 */
@Injectable()
export class NotificationsMetrics implements OnApplicationShutdown {
  /** The registry the metrics are on; serve `await registry.metrics()` to expose them. */
  readonly registry: Registry;
  private readonly logger = new Logger(NotificationsMetrics.name);
  private readonly subscriptions: Subscription[];
  /** The last count, or null when it failed, and when it started (clock time). */
  private lastDepth: { readonly startedAt: number; readonly values: QueueDepthValues | null } | undefined;
  private countingDepth: Promise<QueueDepthValues | null> | undefined;

  constructor(
    @Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions,
    events: DeliveryEvents,
    engine: OutboxEngine,
    private readonly clock: Clock,
    private readonly queue: QueueDepthReader,
  ) {
    this.registry = options.metricsRegistry ?? new Registry();
    const registers = [this.registry];
    const attempts = new Counter({
      name: NAMES.attempts,
      help: 'Webhook delivery attempts by outcome.',
      labelNames: ['outcome'],
      registers,
    });
    const attemptSeconds = new Histogram({
      name: NAMES.attemptSeconds,
      help: 'Duration of webhook delivery attempts.',
      labelNames: ['outcome'],
      buckets: ATTEMPT_SECONDS_BUCKETS,
      registers,
    });
    const finished = new Counter({
      name: NAMES.finished,
      help: 'Deliveries that reached a final state.',
      labelNames: ['state'],
      registers,
    });
    const tickSeconds = new Histogram({
      name: NAMES.tickSeconds,
      help: 'Duration of scheduler runs that claim due retries.',
      buckets: TICK_SECONDS_BUCKETS,
      registers,
    });
    const claimed = new Counter({ name: NAMES.claimed, help: 'Deliveries claimed by scheduler runs.', registers });
    const depth: Gauge<'state'> = new Gauge({
      name: NAMES.queueDepth,
      help: `Deliveries due and waiting, in flight (leased by a worker) and FAILED, counted at most every ${QUEUE_DEPTH_INTERVAL_MS / 1000} s (capped at ${QUEUE_DEPTH_CAP}).`,
      labelNames: ['state'],
      registers,
      collect: () => this.collectQueueDepth(depth),
    });
    new Gauge({
      name: NAMES.circuitsOpen,
      help: 'Endpoints whose circuit is open (or probing) in this instance: their deliveries wait in the outbox.',
      registers,
      collect() {
        this.set(engine.openCircuits());
      },
    });
    new Gauge({
      name: NAMES.partitionsOwned,
      help: `Partitions of users (of ${PARTITION_COUNT}) whose deliveries this instance makes now: all of them when it is the only delivering process, none in an api process.`,
      registers,
      collect() {
        this.set(engine.partitionsOwned());
      },
    });
    new Gauge({
      name: NAMES.leasesHeld,
      help:
        'Deliveries this instance holds the lease of, by step: claim (being taken), admit (target being read), acquire ' +
        '(queued for a slot), send (request in flight), settle (record being committed), release, cancel.',
      labelNames: ['step'],
      registers,
      collect() {
        for (const [step, count] of Object.entries(engine.leasesByStep())) this.set({ step }, count);
      },
    });
    const circuitsOpened = new Counter({
      name: NAMES.circuitsOpened,
      help: 'Times an endpoint stopped answering and its circuit opened.',
      registers,
    });
    const skipped = new Counter({
      name: NAMES.skipped,
      help: "Attempts skipped without a request (outcome circuit_open) because their endpoint's circuit was open; each counts as one of the 6.",
      registers,
    });
    const testSends = new Counter({
      name: NAMES.testSends,
      help: 'Test sends by outcome (not deliveries: counted apart from webhook_attempts_total).',
      labelNames: ['outcome'],
      registers,
    });
    const healthTransitions = new Counter({
      name: NAMES.healthTransitions,
      help: "Changes of a webhook's health (DeliveryEvents.webhookHealthChanged), by the state it changed to; counted by the instance that found the change, once across instances.",
      labelNames: ['to'],
      registers,
    });
    for (const to of HEALTH_TRANSITION_TARGETS) healthTransitions.inc({ to }, 0);
    // Zero series exist from the start, so rate() and alerts see every label before its first event.
    for (const outcome of ATTEMPT_OUTCOMES) {
      attempts.inc({ outcome }, 0);
      attemptSeconds.zero({ outcome });
      testSends.inc({ outcome }, 0);
    }
    for (const state of FINAL_STATES) finished.inc({ state }, 0);
    claimed.inc(0);
    circuitsOpened.inc(0);
    skipped.inc(0);

    this.subscriptions = [
      events.attemptRecorded.subscribe((attempt) => {
        attempts.inc({ outcome: attempt.outcome });
        attemptSeconds.observe({ outcome: attempt.outcome }, attempt.durationMs / 1000);
        if (attempt.status !== DeliveryStatus.PENDING) finished.inc({ state: attempt.status });
      }),
      events.deliveryCancelled.subscribe(() => finished.inc({ state: DeliveryStatus.CANCELLED })),
      events.circuitOpened.subscribe(() => circuitsOpened.inc()),
      events.deliveriesParked.subscribe((batch) => skipped.inc(batch.count)),
      events.testSendFinished.subscribe((send) => testSends.inc({ outcome: send.outcome })),
      events.webhookHealthChanged.subscribe((change) => healthTransitions.inc({ to: change.to })),
      events.schedulerTickFinished.subscribe((tick) => {
        tickSeconds.observe(tick.durationMs / 1000);
        claimed.inc(tick.claimed);
      }),
    ];
  }

  /** Unregisters the metrics, so a shared registry can take a new instance of the module (tests, hot reload). */
  // Not onModuleDestroy: the worker records its last attempts after that, in beforeApplicationShutdown.
  onApplicationShutdown(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    for (const name of Object.values(NAMES)) this.registry.removeSingleMetric(name);
  }

  // A scrape must not fail because the database does: the gauge goes absent and the readiness check reports the database.
  private async collectQueueDepth(gauge: Gauge<'state'>): Promise<void> {
    const values = await this.queueDepth();
    gauge.reset();
    if (values !== null) for (const state of QUEUE_STATES) gauge.set({ state }, values[state]);
  }

  /**
   * The queue depth counted at most once per {@link QUEUE_DEPTH_INTERVAL_MS}, failures included (a database that hangs
   * is not asked again by every scrape): each count holds a pooled connection for its scans, and the pool is the
   * publishers' and workers' too.
   */
  private queueDepth(): Promise<QueueDepthValues | null> {
    const now = this.clock.now();
    const last = this.lastDepth;
    if (last !== undefined && now >= last.startedAt && now - last.startedAt < QUEUE_DEPTH_INTERVAL_MS) return Promise.resolve(last.values);
    this.countingDepth ??= this.countQueueDepth(now).finally(() => (this.countingDepth = undefined));
    return this.countingDepth;
  }

  private async countQueueDepth(startedAt: number): Promise<QueueDepthValues | null> {
    let values: QueueDepthValues | null = null;
    try {
      const depth = await this.queue.queueDepth(this.clock.now(), QUEUE_DEPTH_CAP);
      values = { due: depth.due, in_flight: depth.inFlight, failed: depth.failed };
    } catch (error) {
      this.logger.warn(`Queue depth not counted: ${(error as Error).message}`);
    }
    this.lastDepth = { startedAt, values };
    return values;
  }
}
