import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { GroupCommit } from '../common/group-commit';
import { Limiter } from '../common/limiter';
import { PreferencesService, type WebhookTarget, webhookKey } from '../preferences/preferences.service';
import { type AttemptRecord, type ClaimedDelivery, DeliveryOutboxRepository, type Lease } from './delivery-outbox.repository';
import { DeliveryEvents } from './delivery-events';
import { DELIVERY_SETTINGS, type DeliverySettings, LEASE_MARGIN_MS } from './delivery-settings';
import { blockedBeforeConnect } from './http/attempt-error';
import { type AttemptResult, WebhookSender } from './http/webhook-sender';
import { nextAttemptAt } from './retry-policy';
import { DeliveryStatus } from './webhook-delivery.entity';
import { buildWebhookRequest } from './webhook-request';

type Targets = ReadonlyMap<string, WebhookTarget>;

/**
 * Makes attempts for leased deliveries, with bounded concurrency, and records them with group
 * commits. On shutdown it stops starting attempts, lets started ones finish (each is bounded by the
 * attempt deadline) and releases the leases it will not use.
 */
@Injectable()
export class DeliveryWorker implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly limiter: Limiter;
  private readonly records: GroupCommit<{ claim: ClaimedDelivery; record: AttemptRecord }, boolean>;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly unstarted: ClaimedDelivery[] = [];
  private stopping = false;

  constructor(
    private readonly outbox: DeliveryOutboxRepository,
    private readonly preferences: PreferencesService,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly events: DeliveryEvents,
    @Inject(DELIVERY_SETTINGS) private readonly settings: DeliverySettings,
  ) {
    this.limiter = new Limiter(settings.concurrency);
    this.records = new GroupCommit((attempts) => this.outbox.recordAttempts(attempts), { maxGroupSize: settings.batchSize });
  }

  /** A new lease starting now. While shutting down, new deliveries are left free for other instances. */
  lease(): Lease {
    const now = this.clock.now();
    return { token: randomUUID(), now, until: this.stopping ? now : now + this.settings.leaseMs };
  }

  /** Attempts the deliveries in the background (after their outbox rows are committed). */
  dispatch(claims: readonly ClaimedDelivery[], targets?: Targets): void {
    void this.track(this.attemptAll(claims, targets));
  }

  /**
   * Attempts every delivery due now and resolves with how many were claimed. Claims are topped up in
   * batches while earlier ones are still being attempted, so one slow receiver never holds up a
   * whole batch, and at most `batchSize` claims are held at a time. An attempt whose lease would end
   * before it could finish is not made (the next run takes the delivery), so no attempt is sent twice.
   */
  drainDue(): Promise<number> {
    return this.track(this.drain());
  }

  /** Resolves when every started attempt has been recorded. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
    await this.records.idle();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    const finished = await Promise.race([this.idle().then(() => true), delay(this.settings.shutdownGraceMs, false, { ref: false })]);
    if (!finished) this.logger.warn(`Shutdown: attempts still running after ${this.settings.shutdownGraceMs} ms; their leases will expire`);
    const unused = this.unstarted.splice(0);
    await this.outbox.release(unused);
    if (unused.length > 0) this.logger.log(`Shutdown: released ${unused.length} deliveries for other instances`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sender.close();
  }

  private async drain(): Promise<number> {
    const { batchSize } = this.settings;
    const held = new Set<Promise<void>>();
    let claimed = 0;
    for (;;) {
      while (held.size > batchSize / 2) await Promise.race(held);
      if (this.stopping) break;
      const room = batchSize - held.size;
      const claims = await this.outbox.claimDue(room, this.lease());
      claimed += claims.length;
      for (const attempt of await this.startAttempts(claims)) {
        const done = attempt.finally(() => held.delete(done));
        held.add(done);
      }
      if (claims.length < room) break;
    }
    await Promise.all(held);
    return claimed;
  }

  private async attemptAll(claims: readonly ClaimedDelivery[], targets?: Targets): Promise<void> {
    await Promise.all(await this.startAttempts(claims, targets));
  }

  /**
   * Queues one attempt per claim behind the concurrency limit; each promise settles once that attempt
   * is recorded. If the targets cannot be looked up, the claims are handed back for a later run.
   */
  private async startAttempts(claims: readonly ClaimedDelivery[], targets?: Targets): Promise<Promise<void>[]> {
    if (claims.length === 0) return [];
    let current: Targets;
    try {
      current = targets ?? (await this.preferences.webhookTargets(claims));
    } catch (error) {
      this.logger.error(`Webhook targets of ${claims.length} deliveries could not be read; released for a later run`, (error as Error).stack);
      await this.outbox.release(claims);
      return [];
    }
    return claims.map((claim) => this.attempt(claim, current.get(webhookKey(claim.userId, claim.type))));
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    void work.catch((error: unknown) => this.logger.error('Delivery batch failed', (error as Error).stack)).finally(() => this.inFlight.delete(work));
    return work;
  }

  /** One attempt: the request under the concurrency limit, then its record outside it (group-committed). */
  private async attempt(claim: ClaimedDelivery, target: WebhookTarget | undefined): Promise<void> {
    try {
      const record = await this.limiter.run(() => this.send(claim, target));
      if (record) await this.record(claim, record);
    } catch (error) {
      this.logger.error(`Delivery ${claim.id}: attempt not recorded, retried after its lease expires`, (error as Error).stack);
    }
  }

  /** Sends the request when it may still be sent; null when it was not (stopping, lease ending, webhook disabled). */
  private async send(claim: ClaimedDelivery, target: WebhookTarget | undefined): Promise<AttemptRecord | null> {
    if (this.stopping) {
      this.unstarted.push(claim);
      return null;
    }
    if (this.clock.now() + this.settings.timeoutMs + LEASE_MARGIN_MS >= claim.lockedUntil) {
      // Queued too long: another instance may take the delivery when the lease ends, so sending now could send it twice.
      this.logger.debug(`Delivery ${claim.id}: lease ends before an attempt could finish; left for the next scheduler run`);
      return null;
    }
    if (!target) {
      await this.cancel(claim);
      return null;
    }
    const startedAt = this.clock.now();
    const attemptNumber = claim.attemptCount + 1;
    const result = target.unusableSecret ? refusedUnsigned(target.unusableSecret) : await this.sender.send(this.request(claim, target, attemptNumber, startedAt));
    const next = result.outcome === 'success' ? null : nextAttemptAt(attemptNumber, this.clock.now());
    const status = result.outcome === 'success' ? DeliveryStatus.DELIVERED : next === null ? DeliveryStatus.FAILED : DeliveryStatus.PENDING;
    return { startedAt, result, status, nextAttemptAt: next };
  }

  private request(claim: ClaimedDelivery, target: WebhookTarget, attempt: number, nowMs: number) {
    return buildWebhookRequest({ ...target, body: claim.body, type: claim.type, eventId: claim.eventId, attempt, userAgent: this.settings.userAgent, nowMs });
  }

  private async record(claim: ClaimedDelivery, record: AttemptRecord): Promise<void> {
    if (!(await this.records.submit({ claim, record }))) {
      this.logger.warn(`Delivery ${claim.id}: lease lost before the attempt was recorded`);
      return;
    }
    const { id: deliveryId, eventId, userId, type, attemptCount } = claim;
    const { result, status } = record;
    const { outcome, durationMs, statusCode } = result;
    this.events.attemptRecorded.next({ deliveryId, eventId, userId, type, attemptNumber: attemptCount + 1, outcome, durationMs, statusCode, status });
  }

  private async cancel(claim: ClaimedDelivery): Promise<void> {
    const cancelled = await this.outbox.cancel(claim, this.clock.now(), 'webhook disabled for this event type');
    if (cancelled) this.events.deliveryCancelled.next({ deliveryId: claim.id, userId: claim.userId, type: claim.type });
  }
}

// An attempt that cannot be signed is not sent: it fails like a blocked address, and is retried on schedule.
function refusedUnsigned(reason: string): AttemptResult {
  return { ...blockedBeforeConnect(new Error(reason)), statusCode: null, durationMs: 0, responseExcerpt: null };
}
