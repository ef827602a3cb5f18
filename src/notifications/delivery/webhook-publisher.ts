import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { Clock } from '../clock/clock';
import { InvalidFieldsException } from '../common/api-errors';
import { rawInputErrors } from '../common/raw-input';
import { rfc3339Instant } from '../common/rfc3339';
import { GroupCommit } from '../common/group-commit';
import { flattenValidationErrors } from '../common/validation.pipe';
import { PreferencesService } from '../preferences/preferences.service';
import { webhookKey } from '../preferences/webhook-key';
import type { NewEvent } from './engine/delivery-outbox.repository';
import { OutboxEngine, type Targets } from './engine/outbox-engine';
import { PublishEventDto, type PublishResultDto } from './dto/publish-event.dto';
import { webhookBody } from './webhook-body';

/** An event to publish; see {@link PublishEventDto} for the rules. */
export type PublishableEvent = Omit<PublishEventDto, 'createdAt'> & { createdAt?: string | Date };

/** How to publish. */
export interface PublishOptions {
  /**
   * The host's transaction (the `manager` of `dataSource.transaction(manager => …)` or of a query runner, on the module's
   * DataSource): the events and their deliveries are stored through it and commit or roll back with the host's rows;
   * the first attempts start once it has committed. Without it, the module commits them itself (group-committed).
   */
  readonly manager?: EntityManager;
}

// Every delivery body is stored in a TEXT column (65,535 bytes on MariaDB/MySQL). The field limits of
// PublishEventDto (title, body and payload in bytes as JSON) add up to less, so a valid event always fits.
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
 *
 * @publicApi
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
    private readonly engine: OutboxEngine,
    private readonly clock: Clock,
  ) {}

  publish(event: PublishableEvent, options: PublishOptions = {}): Promise<PublishResultDto> {
    return this.publishMany([event], options);
  }

  /** Validates every event, body size included (400 naming `events[i].field`), queues the deliveries, starts the first attempts. */
  async publishMany(events: readonly PublishableEvent[], options: PublishOptions = {}): Promise<PublishResultDto> {
    const now = this.clock.now();
    const valid = events.map((input, index): ValidEvent => {
      const event = this.validated(input, index);
      return { id: randomUUID(), event, body: serialize(event, now, index) };
    });
    const eventIds = valid.map(({ id }) => id);
    if (valid.length === 0) return { eventIds, queuedDeliveries: 0 };
    if (options.manager) {
      const { manager } = options;
      const [queuedDeliveries] = await this.enqueue([valid], (queued, targets) => this.engine.enqueueWithin(manager, queued, targets));
      return { eventIds, queuedDeliveries };
    }
    return { eventIds, queuedDeliveries: await this.enqueues.submit(valid) };
  }

  /** Queues the deliveries of publish calls (a group, or one call in the host's transaction) and answers how many each call queued. */
  private async enqueue(
    calls: readonly (readonly ValidEvent[])[],
    store: (queued: NewEvent[], targets: Targets) => Promise<void> = (queued, targets) => this.engine.enqueue(queued, targets),
  ): Promise<number[]> {
    const events = calls.flat();
    const targets = await this.preferences.webhookTargets(events.map(({ event }) => event));
    const queued = events
      .filter(({ event }) => targets.has(webhookKey(event.userId, event.type)))
      .map(({ id, event, body }) => ({ id, userId: event.userId, type: event.type, body }));
    await store(queued, targets);
    const queuedIds = new Set(queued.map((event) => event.id));
    return calls.map((call) => call.filter(({ id }) => queuedIds.has(id)).length);
  }

  private validated(event: PublishableEvent, index: number): PublishEventDto {
    const path = `events[${index}]`;
    // An invalid Date has no ISO string: it goes on as a string the validator refuses, naming createdAt.
    const createdAt =
      event.createdAt instanceof Date
        ? Number.isNaN(event.createdAt.getTime())
          ? String(event.createdAt)
          : event.createdAt.toISOString()
        : event.createdAt;
    const plain = event.createdAt instanceof Date ? { ...event, createdAt } : event;
    // As received first (unknown keys, depth, payload numbers): class-transformer would drop keys and overflow on deep input.
    const rawErrors = rawInputErrors(PublishEventDto, plain, path);
    if (rawErrors.length > 0) throw new InvalidFieldsException(rawErrors);
    const dto = plainToInstance(PublishEventDto, plain);
    const errors = validateSync(dto, { whitelist: true, forbidNonWhitelisted: true });
    if (errors.length > 0) throw new InvalidFieldsException(flattenValidationErrors(errors, path));
    return dto;
  }
}

// The exact bytes every attempt of this event sends (spec 2.3); serialized once, here. The payload is the
// published value itself (VerbatimJson), and createdAt the validated RFC 3339 instant, in UTC.
function serialize(event: PublishEventDto, now: number, index: number): string {
  const body = webhookBody({
    type: event.type,
    severity: event.severity,
    title: event.title,
    body: event.body,
    createdAt: event.createdAt === undefined ? new Date(now).toISOString() : rfc3339Instant(event.createdAt)!,
    payload: event.payload ?? {},
    userId: event.userId,
  });
  if (Buffer.byteLength(body) > MAX_BODY_BYTES) {
    // The field limits of PublishEventDto keep a valid event below the cap; should one not, name the largest field.
    const sizes = (['title', 'body', 'payload'] as const).map((field) => ({
      field,
      bytes: Buffer.byteLength(JSON.stringify(event[field] ?? {})),
    }));
    const largest = sizes.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    throw InvalidFieldsException.of(
      `events[${index}].${largest.field}`,
      `makes the delivery body larger than ${MAX_BODY_BYTES} bytes (it takes ${largest.bytes} bytes as JSON)`,
    );
  }
  return body;
}
