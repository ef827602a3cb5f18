import { Inject, Injectable, Logger, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import type { Subscription } from 'rxjs';
import type { EntityManager } from 'typeorm';
import type { EventType } from '../catalog/event-catalog';
import { Clock } from '../clock/clock';
import { GroupCommit } from '../common/concurrency/group-commit';
import { DeliveryEvents, type WebhookHealthChanged } from '../delivery/events/delivery-events.service';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { PreferencesService } from '../preferences/preferences.service';
import { webhookKey } from '../preferences/webhook-key';
import { failingAfterAttempts } from './health-settings';
import { applyObservations, type HealthFacts, type HealthObservation } from './health-transitions';
import { WebhookHealthRepository } from './webhook-health.repository';

const MAX_BATCH = 500;
/**
 * A webhook this instance last stored as clean (no failure in a row, no open circuit) has its row refreshed by a 2xx at
 * most this often: a healthy endpoint's deliveries write nothing else. `lastSuccessAt` may lag by as much.
 */
const HEALTHY_REFRESH_MS = 60_000;
/** Webhooks remembered as clean, the least recently stored forgotten first. */
const KNOWN_HEALTHY_LIMIT = 10_000;

interface Observed {
  readonly userId: number;
  readonly type: EventType;
  readonly observation: HealthObservation;
  /** For an attempt (made or skipped): the URL it went to. */
  readonly webhookUrl?: string;
}

/**
 * Keeps each webhook's health row (`webhook_health`) from what the delivery side reports: recorded attempts (and those
 * skipped for an open circuit) and auto-disable. Off the delivery path: observations are group-committed, each batch
 * one short transaction over the rows it touches, locked, so that instances sharing a database keep one coherent row
 * and each change of state is found, and reported on `DeliveryEvents.webhookHealthChanged`, by exactly one of them.
 */
@Injectable()
export class WebhookHealthRecorder implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookHealth');
  private readonly failingAfter: number;
  private readonly batches = new GroupCommit<Observed, void>((batch) => this.record(batch), { maxGroupSize: MAX_BATCH });
  private readonly subscriptions: Subscription[] = [];
  /** When this instance last stored each clean webhook, by webhookKey. */
  private readonly knownHealthy = new Map<string, number>();
  /** Observations other than a 2xx submitted and not stored yet, by webhookKey: such a webhook is not known clean. */
  private readonly troubled = new Map<string, number>();

  constructor(
    private readonly events: DeliveryEvents,
    private readonly health: WebhookHealthRepository,
    private readonly clock: Clock,
    private readonly preferences: PreferencesService,
    @Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions,
  ) {
    this.failingAfter = failingAfterAttempts(options);
  }

  onModuleInit(): void {
    this.subscriptions.push(
      this.preferences.webhookUrlChanged.subscribe(({ userId, type }) => {
        void this.observe({ userId, type, observation: { kind: 'url_changed', at: this.clock.now() } });
      }),
    );
    const attempts = this.events.attemptRecorded.subscribe(
      ({ userId, type, outcome, statusCode, error, attemptedAt, circuitOpenUntil, webhookUrl }) => {
        const observation: HealthObservation =
          outcome === 'circuit_open'
            ? { kind: 'circuit_open', at: attemptedAt, until: circuitOpenUntil ?? attemptedAt }
            : { kind: 'attempt', at: attemptedAt, outcome, statusCode, error };
        void this.observe({ userId, type, observation, webhookUrl });
      },
    );
    this.subscriptions.push(attempts);
  }

  /** Auto-disable turned a webhook off: reported in order after the attempts that led to it. */
  disabled(userId: number, type: EventType, at: number): Promise<void> {
    return this.observe({ userId, type, observation: { kind: 'disabled', at } });
  }

  /** Resolves once everything observed so far is stored (and its changes reported). */
  idle(): Promise<void> {
    return this.batches.idle();
  }

  async onApplicationShutdown(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    await this.batches.idle();
  }

  private observe(observed: Observed): Promise<void> {
    const key = webhookKey(observed.userId, observed.type);
    if (!isSuccess(observed.observation)) {
      this.knownHealthy.delete(key);
      this.troubled.set(key, (this.troubled.get(key) ?? 0) + 1);
    } else if (this.clock.now() - (this.knownHealthy.get(key) ?? Number.NEGATIVE_INFINITY) < HEALTHY_REFRESH_MS) {
      return Promise.resolve(); // stored clean a moment ago: nothing this 2xx would change but its time
    }
    return this.batches.submit(observed);
  }

  /** Remembers the webhooks this batch stored clean, unless something else than a 2xx of theirs is on its way. */
  private stored(batch: readonly Observed[], writes: ReadonlyMap<string, HealthFacts>, now: number): void {
    for (const { userId, type, observation } of batch) {
      if (isSuccess(observation)) continue;
      const key = webhookKey(userId, type);
      const left = this.troubled.get(key)! - 1;
      if (left > 0) this.troubled.set(key, left);
      else this.troubled.delete(key);
    }
    for (const [key, facts] of writes) {
      if (facts.failedAttemptsInRow > 0 || facts.circuitOpenUntil !== null || this.troubled.has(key)) continue;
      this.knownHealthy.delete(key);
      this.knownHealthy.set(key, now);
      if (this.knownHealthy.size > KNOWN_HEALTHY_LIMIT) this.knownHealthy.delete(this.knownHealthy.keys().next().value!);
    }
  }

  // Never throws: a batch that cannot be written is logged and dropped (health is a view; the next attempts correct it).
  private async record(batch: Observed[]): Promise<void[]> {
    let written: ReadonlyMap<string, HealthFacts> = new Map();
    try {
      const byWebhook = new Map<string, { userId: number; type: EventType; observed: Observed[] }>();
      for (const observed of batch) {
        const key = webhookKey(observed.userId, observed.type);
        const entry = byWebhook.get(key) ?? { userId: observed.userId, type: observed.type, observed: [] };
        entry.observed.push(observed);
        byWebhook.set(key, entry);
      }
      const keys = [...byWebhook.values()];
      // Read under the rows' locks: an attempt recorded after the URL change was committed is seen as the old URL's.
      const currentUrls = batch.some((observed) => observed.webhookUrl !== undefined)
        ? (manager: EntityManager) => this.preferences.webhookUrls(keys, manager)
        : undefined;
      const changes = await this.health.update(
        keys,
        this.clock.now(),
        (stored, urls: ReadonlyMap<string, string | null> | undefined) => {
          const writes = new Map<string, HealthFacts>();
          const found: WebhookHealthChanged[] = [];
          for (const [key, { userId, type, observed }] of byWebhook) {
            const current = urls?.get(key);
            // An attempt to a URL the user has replaced since tells nothing about the URL of now (it started healthy).
            const observations = observed
              .filter(({ webhookUrl }) => webhookUrl === undefined || current == null || webhookUrl === current)
              .map(({ observation }) => observation);
            const { facts, changes } = applyObservations({ userId, type }, stored.get(key)!, observations, this.failingAfter);
            writes.set(key, facts);
            found.push(...changes);
          }
          written = writes;
          return { writes, result: found };
        },
        currentUrls,
      );
      for (const change of changes) {
        this.logger.log(describe(change));
        this.events.emit('webhookHealthChanged', change);
      }
    } catch (error) {
      this.logger.error(`Could not store the health of ${batch.length} observations`, (error as Error).stack);
      written = new Map();
    }
    this.stored(batch, written, this.clock.now());
    return batch.map(() => undefined);
  }
}

function isSuccess(observation: HealthObservation): boolean {
  return observation.kind === 'attempt' && observation.outcome === 'success';
}

/** One log line: ids, states, counts and times; never the URL, a header or a body. */
function describe(change: WebhookHealthChanged): string {
  const facts = [`${change.failedAttemptsInRow} failed attempts in a row`];
  if (change.lastStatusCode !== null) facts.push(`last status ${change.lastStatusCode}`);
  if (change.circuitOpenUntil !== null) facts.push(`circuit open until ${new Date(change.circuitOpenUntil).toISOString()}`);
  return `Webhook ${change.type} of user ${change.userId}: ${change.change} (${change.from} → ${change.to}); ${facts.join(', ')}`;
}
