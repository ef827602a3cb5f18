import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Clock } from '../clock/clock';
import { Limiter } from '../common/limiter';
import { PreferencesService } from '../preferences/preferences.service';
import { type ClaimedDelivery, DeliveryOutboxRepository, type Lease } from './delivery-outbox.repository';
import { DeliveryEvents } from './delivery-events';
import { DELIVERY_SETTINGS, type DeliverySettings } from './delivery-settings';
import { WebhookSender } from './http/webhook-sender';
import { nextAttemptAt } from './retry-policy';
import { DeliveryStatus } from './webhook-delivery.entity';
import { buildWebhookRequest } from './webhook-request';

/** Makes attempts for leased deliveries, with bounded concurrency, and records what happened. */
@Injectable()
export class DeliveryWorker implements OnApplicationShutdown {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly limiter: Limiter;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly outbox: DeliveryOutboxRepository,
    private readonly preferences: PreferencesService,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly events: DeliveryEvents,
    @Inject(DELIVERY_SETTINGS) private readonly settings: DeliverySettings,
  ) {
    this.limiter = new Limiter(settings.concurrency);
  }

  /** A new lease starting now. */
  lease(): Lease {
    const now = this.clock.now();
    return { token: randomUUID(), now, until: now + this.settings.leaseMs };
  }

  /** Attempts the deliveries in the background (after their outbox rows are committed). */
  dispatch(claims: readonly ClaimedDelivery[]): void {
    for (const claim of claims) {
      const task = this.limiter.run(() => this.attempt(claim)).catch((error: unknown) => this.logger.error(`Delivery ${claim.id} failed unexpectedly`, (error as Error).stack));
      this.inFlight.add(task);
      void task.finally(() => this.inFlight.delete(task));
    }
  }

  /** Attempts the deliveries and resolves when all are recorded. */
  async attemptAll(claims: readonly ClaimedDelivery[]): Promise<void> {
    await Promise.all(claims.map((claim) => this.limiter.run(() => this.attempt(claim))));
  }

  /** Claims one batch of due deliveries and attempts them; returns how many were claimed. */
  async attemptDueBatch(): Promise<number> {
    const claims = await this.outbox.claimDue(this.settings.batchSize, this.lease());
    await this.attemptAll(claims);
    return claims.length;
  }

  get batchSize(): number {
    return this.settings.batchSize;
  }

  /** Resolves when every background attempt has been recorded. */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.idle();
    await this.sender.close();
  }

  private async attempt(claim: ClaimedDelivery): Promise<void> {
    const target = await this.preferences.webhookTarget(claim.userId, claim.type);
    if (!target) {
      const cancelled = await this.outbox.cancel(claim, this.clock.now(), 'webhook disabled for this event type');
      if (cancelled) this.events.deliveryCancelled.next({ deliveryId: claim.id, userId: claim.userId, type: claim.type });
      return;
    }
    const startedAt = this.clock.now();
    const attempt = claim.attemptCount + 1;
    const request = buildWebhookRequest({ ...target, body: claim.body, type: claim.type, eventId: claim.eventId, attempt, userAgent: this.settings.userAgent, nowMs: startedAt });
    const result = await this.sender.send(request);
    const next = result.outcome === 'success' ? null : nextAttemptAt(attempt, this.clock.now());
    const status = result.outcome === 'success' ? DeliveryStatus.DELIVERED : next === null ? DeliveryStatus.FAILED : DeliveryStatus.PENDING;
    const recorded = await this.outbox.recordAttempt(claim, { startedAt, result, status, nextAttemptAt: next });
    if (!recorded) {
      this.logger.warn(`Delivery ${claim.id}: lease lost before the attempt was recorded`);
      return;
    }
    const { id: deliveryId, eventId, userId, type } = claim;
    const { outcome, durationMs, statusCode } = result;
    this.events.attemptRecorded.next({ deliveryId, eventId, userId, type, attemptNumber: attempt, outcome, durationMs, statusCode, status });
  }
}
