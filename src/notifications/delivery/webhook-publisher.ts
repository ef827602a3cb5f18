import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { Clock } from '../clock/clock';
import { InvalidFieldsException } from '../common/api-errors';
import { GroupCommit } from '../common/group-commit';
import { flattenValidationErrors } from '../common/validation.pipe';
import { PreferencesService, webhookKey } from '../preferences/preferences.service';
import { DeliveryOutboxRepository } from './delivery-outbox.repository';
import { DeliveryWorker } from './delivery-worker';
import { PublishEventDto, type PublishResultDto } from './dto/publish-event.dto';
import { webhookBody } from './webhook-body';

/** An event to publish; see {@link PublishEventDto} for the rules. */
export type PublishableEvent = Omit<PublishEventDto, 'createdAt'> & { createdAt?: string | Date };

const MAX_BODY_BYTES = 60_000;
const MAX_EVENTS_PER_GROUP = 1000;
// Two groups commit at once: a call arriving during a commit starts at once instead of waiting for it.
const ENQUEUE_CONCURRENCY = 2;

interface ValidEvent {
  readonly id: string;
  readonly event: PublishEventDto;
  readonly body: string;
}

/**
 * Publishes funding-automation events to the users' webhooks. Each event whose user has WEBHOOK
 * enabled for its type becomes one outbox delivery, committed before any request is made.
 * Concurrent publish calls are group-committed: one targets lookup and one transaction for all the
 * calls that arrive while the previous group commits, so a burst costs a few transactions, not one each.
 */
@Injectable()
export class WebhookPublisher {
  private readonly enqueues = new GroupCommit<readonly ValidEvent[], number>((calls) => this.enqueue(calls), {
    maxGroupSize: MAX_EVENTS_PER_GROUP,
    sizeOf: (call) => call.length,
    concurrency: ENQUEUE_CONCURRENCY,
  });

  constructor(
    private readonly preferences: PreferencesService,
    private readonly outbox: DeliveryOutboxRepository,
    private readonly worker: DeliveryWorker,
    private readonly clock: Clock,
  ) {}

  publish(event: PublishableEvent): Promise<PublishResultDto> {
    return this.publishMany([event]);
  }

  /** Validates every event, body size included (400 naming `events[i].field`), queues the deliveries, starts the first attempts. */
  async publishMany(events: readonly PublishableEvent[]): Promise<PublishResultDto> {
    const now = this.clock.now();
    const valid = events.map((input, index): ValidEvent => {
      const event = this.validated(input, index);
      return { id: randomUUID(), event, body: serialize(event, now, index) };
    });
    const queuedDeliveries = valid.length === 0 ? 0 : await this.enqueues.submit(valid);
    return { eventIds: valid.map(({ id }) => id), queuedDeliveries };
  }

  /** Queues the deliveries of a group of publish calls in one transaction, starts their attempts, and answers how many each call queued. */
  private async enqueue(calls: readonly (readonly ValidEvent[])[]): Promise<number[]> {
    const events = calls.flat();
    const targets = await this.preferences.webhookTargets(events.map(({ event }) => event));
    const queued = events
      .filter(({ event }) => targets.has(webhookKey(event.userId, event.type)))
      .map(({ id, event, body }) => ({ id, userId: event.userId, type: event.type, body }));
    const claims = await this.outbox.enqueue(queued, this.worker.lease());
    this.worker.dispatch(claims, targets);
    const queuedIds = new Set(claims.map((claim) => claim.eventId));
    return calls.map((call) => call.filter(({ id }) => queuedIds.has(id)).length);
  }

  private validated(event: PublishableEvent, index: number): PublishEventDto {
    const plain = event.createdAt instanceof Date ? { ...event, createdAt: event.createdAt.toISOString() } : event;
    const dto = plainToInstance(PublishEventDto, plain);
    const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true });
    if (errors.length > 0) throw new InvalidFieldsException(flattenValidationErrors(errors, `events[${index}]`));
    return dto;
  }
}

// The exact bytes every attempt of this event sends (spec 2.3); serialized once, here.
function serialize(event: PublishEventDto, now: number, index: number): string {
  const body = webhookBody({
    type: event.type,
    severity: event.severity,
    title: event.title,
    body: event.body,
    createdAt: new Date(event.createdAt ?? now).toISOString(),
    payload: event.payload ?? {},
    userId: event.userId,
  });
  if (Buffer.byteLength(body) > MAX_BODY_BYTES) {
    throw InvalidFieldsException.of(`events[${index}].payload`, `makes the delivery body larger than ${MAX_BODY_BYTES} bytes`);
  }
  return body;
}
