import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../../clock/clock';
import { InvalidFieldsException } from '../../common/api/api-errors';
import { rfc3339Instant } from '../../common/values/rfc3339';
import { GroupCommit } from '../../common/concurrency/group-commit';
import { isUniqueViolation } from '../../common/database/database-errors';
import { validatedDto } from '../../common/api/validation.pipe';
import { EventSchemasService } from '../../event-schemas/event-schemas.service';
import { PreferencesService } from '../../preferences/preferences.service';
import { webhookKey } from '../../preferences/webhook-key';
import { AfterCommit } from '../engine/after-commit.subscriber';
import { OutboxEngine } from '../engine/outbox-engine.service';
import { PublishEventDto, type PublishResultDto } from './dto/publish-event.dto';
import { IdempotencyKeyInProgressException, IdempotencyKeyReusedException } from './idempotency/idempotency-conflict.exception';
import { contentHash, HOST_SCOPE, validIdempotencyKey } from './idempotency/idempotency-key';
import { IdempotencyKeyRepository, type KeyedPublish } from './idempotency/idempotency-key.repository';
import { IDEMPOTENCY_WINDOW_MS } from './idempotency/idempotency-window';
import { DeliveryTracing } from '../trace-context/delivery-tracing';
import type { TraceContext } from '../trace-context/trace-context';
import { traceContextOption } from '../trace-context/trace-context-option';
import { webhookBody } from '../wire/webhook-body';

/** An event to publish; see {@link PublishEventDto} for the rules. */
export type PublishableEvent = Omit<PublishEventDto, 'createdAt'> & { createdAt?: string | Date };

/** How to publish. */
export interface PublishOptions {
  /**
   * The host's transaction (the `manager` of `dataSource.transaction(manager => …)` or of a query runner, on the module's
   * DataSource): the events and their deliveries are stored through it and commit or roll back with the host's rows;
   * the first attempts start once it has committed. Without it, the module commits them itself (group-committed), and
   * what answered is kept whatever other transactions do, on every database.
   *
   * Inside a transaction, pass it. A call without it from inside a `dataSource.transaction(…)` callback throws a
   * `TypeError` saying so, on every database: on MySQL/MariaDB it would commit apart and outlive your rollback, on
   * SQLite's one connection it could only join your transaction (and vanish with its rollback) or wait for its end,
   * which never comes while you await it. A transaction a query runner started by hand has no callback to tell your
   * calls from other callers': on SQLite the module's transactions wait for it to end (others' publishes are then kept
   * after your rollback), and one waiting over 10 s is refused (`QueryRunnerTransactionStillOpenError`) saying to pass
   * `{ manager: queryRunner.manager }`, nothing stored; on MySQL/MariaDB such a call is committed apart.
   */
  readonly manager?: EntityManager;
  /**
   * Makes a retry safe: a call with a key already used by this host within the window (`retention.idempotencyKeyHours`,
   * 24 h by default) and the same events answers that call's event ids and queued count (with `replayed: true`), and
   * stores and sends nothing new, on any instance; with other events it throws a 409 (`ConflictException`). One key
   * covers the whole call (all of `publishMany`'s events): use one per logical publish, e.g. a UUID made once and kept
   * for its retries, or your own id for it. 1 to 255 visible ASCII characters. The key commits with the events (in
   * `manager`'s transaction when given), so a publish that rolls back leaves no key.
   */
  readonly idempotencyKey?: string;
  /**
   * The W3C `traceparent` of the span that publishes (`00-<trace-id>-<parent-id>-<trace-flags>`, lowercase hex): every
   * attempt of these events, retries, redeliveries and recoveries included, sends a `traceparent` of that trace, with a
   * span id of its own (a child span of the publish) and the same sampled flag. Without it, with an OpenTelemetry SDK
   * registered, the active span is the parent. An invalid value throws a 400 (`InvalidFieldsException`) naming it.
   */
  readonly traceparent?: string;
  /** The W3C `tracestate` that goes with `traceparent` (only with it): forwarded unchanged; invalid, a 400 naming it. */
  readonly tracestate?: string;
}

/** {@link PublishOptions} of a producer whose trace context was parsed already (the internal endpoint's headers). */
export type ProducerPublishOptions = Omit<PublishOptions, 'traceparent' | 'tracestate'> & {
  readonly trace?: TraceContext;
  /** How errors name an event's fields: `events[i]` (the default), or `''` for a request of one event as a bare object. */
  readonly eventPath?: (index: number) => string;
};

/** Who publishes: keys are unique within a scope (the internal endpoint's token, or the host). */
export interface PublishScope {
  readonly scope: string;
  /** The key's name in errors: `Idempotency-Key` (the header), `idempotencyKey` (the option). */
  readonly keyField: string;
}

const HOST: PublishScope = { scope: HOST_SCOPE, keyField: 'idempotencyKey' };

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

/** One publish call's events, and its key and trace context to store with them. */
interface PublishCall {
  readonly events: readonly ValidEvent[];
  readonly key?: Omit<KeyedPublish, 'eventIds' | 'queuedDeliveries'>;
  readonly trace?: TraceContext;
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
  private readonly enqueues = new GroupCommit<PublishCall, number>((calls) => this.enqueue(calls), {
    maxGroupSize: MAX_EVENTS_PER_GROUP,
    sizeOf: (call) => call.events.length,
    concurrency: ENQUEUE_CONCURRENCY,
  });
  // Keyed calls without the host's manager: a transaction of ours holds each group's keys and events together. A key
  // already stored fails its group, which GroupCommit then commits call by call, so that only that call fails.
  private readonly keyedEnqueues = new GroupCommit<PublishCall, number>(
    (calls) => this.keys.transaction((manager) => this.enqueue(calls, manager)),
    { maxGroupSize: MAX_EVENTS_PER_GROUP, sizeOf: (call) => call.events.length, concurrency: ENQUEUE_CONCURRENCY },
  );

  constructor(
    private readonly preferences: PreferencesService,
    private readonly engine: OutboxEngine,
    private readonly clock: Clock,
    private readonly afterCommit: AfterCommit,
    private readonly keys: IdempotencyKeyRepository,
    @Inject(IDEMPOTENCY_WINDOW_MS) private readonly keyWindowMs: number,
    private readonly tracing: DeliveryTracing,
    private readonly eventSchemas: EventSchemasService,
  ) {}

  publish(event: PublishableEvent, options: PublishOptions = {}): Promise<PublishResultDto> {
    return this.publishMany([event], options);
  }

  /**
   * Validates every event, body size and the payload's event schema included (400 naming `events[i].field`: nothing of
   * the call is stored when one event is invalid), queues the deliveries, starts the first
   * attempts. With `idempotencyKey`, a retry answers the first call's result (see {@link PublishOptions}).
   */
  async publishMany(events: readonly PublishableEvent[], options: PublishOptions = {}): Promise<PublishResultDto> {
    const { traceparent, tracestate, ...rest } = options;
    const trace = traceContextOption(traceparent, tracestate);
    return this.publishChecked(HOST, events, (event, index) => this.validated(event, index), { ...rest, trace });
  }

  /**
   * {@link publishMany} for a producer of its own scope (the internal endpoint: its token), with events its validation
   * pipe checked already (naming the fields as its request has them): they are not validated a second time. @internal
   */
  publishValidated(
    producer: PublishScope,
    events: readonly PublishEventDto[],
    options: ProducerPublishOptions = {},
  ): Promise<PublishResultDto> {
    return this.publishChecked(producer, events, (event) => event, options);
  }

  private async publishChecked<E>(
    producer: PublishScope,
    events: readonly E[],
    validated: (event: E, index: number) => PublishEventDto,
    options: ProducerPublishOptions,
  ): Promise<PublishResultDto> {
    const now = this.clock.now();
    const key = options.idempotencyKey === undefined ? undefined : validIdempotencyKey(options.idempotencyKey, producer.keyField);
    const eventPath = options.eventPath ?? ((index: number) => `events[${index}]`);
    const valid = events.map((input, index): ValidEvent => {
      const event = validated(input, index);
      this.eventSchemas.checkPayload(event.type, event.payload, eventPath(index));
      return { id: randomUUID(), event, body: serialize(event, now, index) };
    });
    // Refused before anything is read through it: another DataSource's manager would read (and write) another database.
    if (options.manager) this.afterCommit.transactionOf(options.manager);
    else this.afterCommit.refuseInsideTransaction();
    if (valid.length === 0) return { eventIds: [], queuedDeliveries: 0 };
    const manager = options.manager;
    return this.tracing.publish(options.trace, { eventTypes: valid.map(({ event }) => event.type) }, (trace) =>
      key === undefined ? this.publishUnkeyed(valid, manager, trace) : this.publishOnce(producer, key, valid, now, manager, trace),
    );
  }

  private async publishUnkeyed(
    valid: readonly ValidEvent[],
    manager: EntityManager | undefined,
    trace?: TraceContext,
  ): Promise<PublishResultDto> {
    const call: PublishCall = { events: valid, trace };
    const queuedDeliveries = await (manager ? this.enqueue([call], manager).then(([n]) => n) : this.enqueues.submit(call));
    return { eventIds: valid.map(({ id }) => id), queuedDeliveries };
  }

  /**
   * A keyed publish: the stored result when the key was used within the window (409 for other events), else the
   * events and the key in one transaction. The key's primary key decides a race: the loser answers the winner's result.
   */
  private async publishOnce(
    producer: PublishScope,
    key: string,
    valid: readonly ValidEvent[],
    now: number,
    manager: EntityManager | undefined,
    trace?: TraceContext,
  ): Promise<PublishResultDto> {
    const scoped = { scope: producer.scope, key };
    const earlier = await this.keys.find(scoped, manager);
    const requestHash = contentHash(valid.map(({ event }) => event));
    if (earlier && earlier.createdAt >= now - this.keyWindowMs) return this.replay(earlier, requestHash, producer);
    const call: PublishCall = { events: valid, trace, key: { ...scoped, requestHash, createdAt: now, replacesExpired: earlier !== null } };
    try {
      const queuedDeliveries = await (manager ? this.enqueue([call], manager).then(([n]) => n) : this.keyedEnqueues.submit(call));
      return { eventIds: valid.map(({ id }) => id), queuedDeliveries };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      // Another call with this key committed first (on MySQL/MariaDB, this one's insert waited for it): answer its result.
      const winner = await this.keys.find(scoped, manager);
      if (!winner) throw new IdempotencyKeyInProgressException(producer.keyField);
      return this.replay(winner, requestHash, producer);
    }
  }

  /** The stored answer of a key, when this call sent the same events; a 409 otherwise. */
  private replay(stored: KeyedPublish, requestHash: string, producer: PublishScope): PublishResultDto {
    if (stored.requestHash !== requestHash) throw new IdempotencyKeyReusedException(producer.keyField, stored.createdAt);
    return { eventIds: [...stored.eventIds], queuedDeliveries: stored.queuedDeliveries, replayed: true };
  }

  /**
   * Queues the deliveries of publish calls (a group, or one call in a transaction: the host's, or ours for keyed calls;
   * everything it reads and writes then goes through `manager`), stores their keys first, and answers how many each
   * call queued.
   */
  private async enqueue(calls: readonly PublishCall[], manager?: EntityManager): Promise<number[]> {
    const events = calls.flatMap((call) => call.events.map((valid) => ({ ...valid, trace: call.trace })));
    const targets = await this.preferences.webhookTargets(
      events.map(({ event }) => event),
      manager,
    );
    // In the order published: each delivery takes the next number of its webhook URL's stream in this order.
    const queued = events.flatMap(({ id, event, body, trace }) => {
      const target = targets.get(webhookKey(event.userId, event.type));
      return target ? [{ id, userId: event.userId, type: event.type, body, trace, streamId: target.streamId ?? null }] : [];
    });
    const queuedIds = new Set(queued.map((event) => event.id));
    const counts = calls.map((call) => call.events.filter(({ id }) => queuedIds.has(id)).length);
    const keyed = calls.flatMap((call, index): KeyedPublish[] =>
      call.key ? [{ ...call.key, eventIds: call.events.map(({ id }) => id), queuedDeliveries: counts[index] }] : [],
    );
    if (manager) {
      // The keys before the events: on MySQL/MariaDB a call whose key another transaction holds waits here, having written nothing.
      if (keyed.length > 0) await this.keys.insert(manager, keyed, this.clock.now() - this.keyWindowMs);
      await this.engine.enqueueWithin(manager, queued, targets);
    } else await this.engine.enqueue(queued, targets).catch((error: unknown) => this.storedBefore(error));
    return counts;
  }

  /**
   * An enqueue of our own events failed. Their ids are new, so a unique violation on them says a try of this very
   * call stored them already: the group it was in committed, then its answer was lost, and GroupCommit tried its calls
   * again one by one. They are stored (and attempted once the first try's lease ends); anything else is thrown.
   */
  private storedBefore(error: unknown): void {
    if (!isUniqueViolation(error)) throw error;
  }

  private validated(event: PublishableEvent, index: number): PublishEventDto {
    // An invalid Date has no ISO string: it goes on as a string the validator refuses, naming createdAt.
    const createdAt =
      event.createdAt instanceof Date
        ? Number.isNaN(event.createdAt.getTime())
          ? String(event.createdAt)
          : event.createdAt.toISOString()
        : event.createdAt;
    return validatedDto(PublishEventDto, event.createdAt instanceof Date ? { ...event, createdAt } : event, `events[${index}]`);
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
