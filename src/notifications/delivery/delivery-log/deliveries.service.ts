import { randomUUID } from 'node:crypto';
import { ConflictException, Inject, Injectable, NotFoundException } from '@nestjs/common';
import type { EventType } from '../../catalog/event-catalog';
import { Clock } from '../../clock/clock';
import { InvalidFieldsException } from '../../common/api/api-errors';
import { PreferencesService } from '../../preferences/preferences.service';
import { DeliveryLogRepository, type OrderedHead } from './delivery-log.repository';
import { OutboxEngine } from '../engine/outbox-engine.service';
import {
  cursorAfter,
  cursorBeforeId,
  type DeliveryDetailDto,
  type DeliveryDto,
  type DeliveryPageDto,
  type ListDeliveriesQueryDto,
  type RecoverDeliveriesDto,
  type RecoverResultDto,
  type TestSendResultDto,
} from './dto/delivery.dto';
import { rfc3339Instant } from '../../common/values/rfc3339';
import { Severity } from '../wire/severity';
import { DeliveryEvents } from '../events/delivery-events.service';
import { DELIVERY_SETTINGS, type DeliverySettings } from '../delivery-settings';
import { MAX_ATTEMPTS } from '../retry-policy';
import { WebhookSender } from '../http/webhook-sender';
import { DeliveryStatus, type WebhookDelivery } from '../entities/webhook-delivery.entity';
import { webhookBody } from '../wire/webhook-body';
import { buildWebhookRequest } from '../wire/webhook-request';

/** What a user sees of their deliveries, and what they can do with them. */
@Injectable()
export class DeliveriesService {
  constructor(
    private readonly log: DeliveryLogRepository,
    private readonly engine: OutboxEngine,
    private readonly preferences: PreferencesService,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly events: DeliveryEvents,
    @Inject(DELIVERY_SETTINGS) private readonly settings: DeliverySettings,
  ) {}

  async list(userId: number, query: ListDeliveriesQueryDto): Promise<DeliveryPageDto> {
    const limit = query.limit ?? 20;
    const { rows, examinedTo } = await this.log.listForUser({
      userId,
      limit: limit + 1,
      beforeId: query.cursor === undefined ? undefined : cursorBeforeId(query.cursor),
      type: query.type,
      status: query.status,
    });
    const page = rows.slice(0, limit);
    // A page that stopped at its bound of examined deliveries goes on from the last one it examined: it may be short, even empty.
    const nextCursor = rows.length > limit ? cursorAfter(page[page.length - 1].id) : examinedTo === null ? null : cursorAfter(examinedTo);
    return { data: page.map(toDeliveryDto), nextCursor };
  }

  async detail(userId: number, id: number): Promise<DeliveryDetailDto> {
    const delivery = await this.ownDelivery(userId, id);
    const attempts = await this.log.attemptsOf(delivery.id);
    return {
      ...toDeliveryDto(delivery),
      attempts: attempts.map((a) => ({
        attemptNumber: a.attemptNumber,
        startedAt: new Date(a.startedAt).toISOString(),
        durationMs: a.durationMs,
        outcome: a.outcome,
        statusCode: a.statusCode,
        error: a.error,
        responseExcerpt: a.responseExcerpt,
      })),
    };
  }

  /**
   * Queues the same event again: same event id and body, a new cycle of up to 6 attempts. Refused (409) while a delivery
   * of the event is PENDING (this one or an earlier redelivery): its cycle is running, and a second one would send the
   * event twice at once. The database holds one PENDING delivery per event, so two calls at once start one cycle.
   */
  async redeliver(userId: number, id: number): Promise<DeliveryDto> {
    const delivery = await this.ownDelivery(userId, id);
    if (delivery.status === DeliveryStatus.PENDING) {
      const next = delivery.nextAttemptAt === null ? 'an attempt in progress' : `next at ${new Date(delivery.nextAttemptAt).toISOString()}`;
      throw new ConflictException(
        `Delivery ${id} is still PENDING: its retry cycle is running (${delivery.attemptCount} of ${MAX_ATTEMPTS} attempts made, ${next}); redeliver it once it is DELIVERED, FAILED or CANCELLED`,
      );
    }
    const redelivered = await this.engine.redeliver({ id: delivery.eventId, userId, type: delivery.type });
    if (redelivered === null) throw notFound(id); // retention removed it since it was read
    if ('running' in redelivered)
      throw new ConflictException(
        `Event ${delivery.eventId} is being delivered already: delivery ${redelivered.running} is PENDING (its retry cycle is running); redeliver once it is DELIVERED, FAILED or CANCELLED`,
      );
    return toDeliveryDto((await this.log.findForUser(userId, redelivered.started))!);
  }

  /**
   * Queues a new cycle for the user's deliveries that ended FAILED in the window (same event ids and bytes), paced
   * behind live traffic. The window: `since` ≤ `until` (default now), at most {@link MAX_RECOVER_WINDOW_DAYS} days.
   */
  /** The user's deliveries waiting (PENDING) per type, counted among at most `cap` of them. */
  waitingByType(userId: number, cap: number): Promise<Map<EventType, number>> {
    return this.log.pendingByType(userId, cap);
  }

  /** Per URL hash, the delivery each of the user's ordered streams waits for, and how many wait behind it. */
  orderedHeads(userId: number): Promise<Map<string, OrderedHead>> {
    return this.log.orderedHeads(userId);
  }

  recover(userId: number, input: RecoverDeliveriesDto): Promise<RecoverResultDto> {
    const now = this.clock.now();
    const since = Date.parse(rfc3339Instant(input.since)!);
    const until = input.until === undefined ? now : Date.parse(rfc3339Instant(input.until)!);
    if (since > now) throw InvalidFieldsException.of('since', 'must not be in the future');
    if (since > until) throw InvalidFieldsException.of('until', `must not be before since (${input.since})`);
    if (until - since > MAX_RECOVER_WINDOW_DAYS * DAY_MS)
      throw InvalidFieldsException.of('since', `must be at most ${MAX_RECOVER_WINDOW_DAYS} days before until (the window is bounded)`);
    return this.engine.recover({ userId, since, until, type: input.type });
  }

  /** Sends one signed test event to the type's configured URL now; not stored, not retried. */
  async sendTest(userId: number, type: EventType): Promise<TestSendResultDto> {
    const target = await this.preferences.configuredWebhook(userId, type);
    if (!target) throw InvalidFieldsException.of('type', `has no webhook URL configured; enable WEBHOOK for ${type} first`);
    if (!target.secret) throw InvalidFieldsException.of('type', `has no signing secret yet; enable WEBHOOK for ${type} first`);
    const now = this.clock.now();
    const body = webhookBody({
      type,
      severity: Severity.INFO,
      title: 'Test event',
      body: `A test delivery of ${type} to check your endpoint and signature verification.`,
      createdAt: new Date(now).toISOString(),
      payload: { test: true },
      userId,
    });
    const request = buildWebhookRequest({
      url: target.url,
      secret: target.secret,
      previousSecret: target.previousSecret,
      body,
      type,
      eventId: `test_${randomUUID()}`,
      attempt: 1,
      userAgent: this.settings.userAgent,
      nowMs: now,
    });
    const result = await this.sender.send(request);
    this.events.emit('testSendFinished', { userId, type, outcome: result.outcome, durationMs: result.durationMs });
    const { outcome, statusCode, durationMs, error, responseExcerpt } = result; // what the API shows (TestSendResultDto)
    return { success: outcome === 'success', outcome, statusCode, durationMs, error, responseExcerpt };
  }

  private async ownDelivery(userId: number, id: number): Promise<WebhookDelivery> {
    const delivery = await this.log.findForUser(userId, id);
    if (!delivery) throw notFound(id);
    return delivery;
  }
}

/** The longest recover window: FAILED deliveries are kept 90 days by default. */
export const MAX_RECOVER_WINDOW_DAYS = 90;
const DAY_MS = 86_400_000;

const notFound = (id: number) => new NotFoundException(`Delivery ${id} not found`);

function toDeliveryDto(d: WebhookDelivery): DeliveryDto {
  return {
    id: d.id,
    eventId: d.eventId,
    type: d.type,
    status: d.status,
    attemptCount: d.attemptCount,
    nextAttemptAt: d.nextAttemptAt === null ? null : new Date(d.nextAttemptAt).toISOString(),
    lastStatusCode: d.lastStatusCode,
    lastError: d.lastError,
    waitingReason: d.waitingReason,
    sequence: d.sequence,
    createdAt: new Date(d.createdAt).toISOString(),
    updatedAt: new Date(d.updatedAt).toISOString(),
  };
}
