import { Logger, type LoggerService } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { WEBHOOK_EVENT_TYPES, type EventType } from '../../src/notifications/catalog/event-catalog';
import { DeliveryEvents } from '../../src/notifications/delivery/events/delivery-events.service';
import { LEASE_MARGIN_MS, MAX_CLOCK_SKEW_MS, type DeliverySettings } from '../../src/notifications/delivery/delivery-settings';
import type { AfterCommit } from '../../src/notifications/delivery/engine/after-commit.subscriber';
import { isUnreachable } from '../../src/notifications/delivery/engine/circuit-breaker';
import { endpointKeyOf } from '../../src/notifications/delivery/engine/endpoint-queues';
import { OutboxEngine } from '../../src/notifications/delivery/engine/outbox-engine.service';
import { PartitionOwnership } from '../../src/notifications/delivery/partitions/partition-ownership';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import type { ProcessRole } from '../../src/notifications/process-role';
import type { AttemptRecord, ClaimedDelivery, NewEvent } from '../../src/notifications/delivery/engine/outbox-store';
import type { AttemptResult, WebhookRequest } from '../../src/notifications/delivery/http/attempt-result';
import { EGRESS_WINDOW_MS } from '../../src/notifications/delivery/partitions/egress-watch';
import type { WebhookSender } from '../../src/notifications/delivery/http/webhook-sender';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/notifications/delivery/retry-policy';
import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import type { PreferencesService, WebhookTarget } from '../../src/notifications/preferences/preferences.service';
import { webhookKey } from '../../src/notifications/preferences/webhook-key';
import { DeliveryScheduler } from '../../src/notifications/scheduler/delivery-scheduler.service';
import { DatabaseFaults } from './database-faults';
import { EgressFaults, STAND_DOWN_GRACE_MS } from './egress-faults';
import { claimOrder, type DeliveryRow, InMemoryOutboxStore, isDue, SimTransaction } from './in-memory-outbox-store';
import { InMemoryPartitionLeases } from './in-memory-partition-leases';
import { INVARIANTS, INVARIANT_NAMES, type InvariantName } from './invariants';
import { type Mutation, MUTATIONS, type MutationName } from './mutations';
import { Prng } from './prng';
import { SimClock, SimTime } from './sim-time';
import {
  type DeliveryTrack,
  type DuplicateCause,
  engineCapacityOf,
  engineQueuesOf,
  formatMs,
  HELD_PER_ENDPOINT_SLOT,
  HELD_PER_SLOT,
  type HostTransaction,
  HOUR,
  type Instance,
  LEASE_MS,
  MAX_COOL_DOWN_FACTOR,
  MINUTE,
  type Mode,
  type Origin,
  RETENTION_MS,
  SCHEDULE_MS,
  SCHEDULE_SLACK_MS,
  SECOND,
  type SendRecord,
  SETTLE_TURNS_MAX,
  type SimEvent,
  SKIPPED_FOR_OPEN_CIRCUIT,
  START,
  TIMEOUT_MS,
  TRACE_STEPS,
  unsentRecord,
} from './world-model';
import { InstanceStore, type StoreWorld } from './instance-store';
import { CircuitOpenings } from './circuit-openings';
import type { KeptCircuit } from '../../src/notifications/delivery/partitions/kept-circuit';
export interface SimOptions {
  readonly seed: number;
  /** Random steps before the quiet phase (no new work; time runs until every delivery is final). */
  readonly steps: number;
  /** The invariants checked (all unless told). */
  readonly invariants?: ReadonlySet<InvariantName>;
  /** Whether a violation is counted and reported instead of thrown (KNOWN_VIOLATIONS unless --strict). */
  readonly tolerates?: (invariant: InvariantName, detail: string) => boolean;
  /** A deliberately broken engine or store (mutations.ts): the run must break its invariant. */
  readonly mutation?: MutationName;
  /** Every trace line as it happens (replay). */
  readonly verbose?: (line: string) => void;
  /** How to replay this run, printed with a failure. */
  readonly replay?: (seed: number) => string;
}

export interface ToleratedViolation {
  readonly invariant: InvariantName;
  readonly step: number;
  readonly message: string;
  /** Distinct deliveries, events or requests that broke it in this run. */
  count: number;
}

export interface SimResult {
  readonly seed: number;
  readonly steps: number;
  readonly simulatedMs: number;
  readonly events: number;
  readonly requests: number;
  /** Repeated sends of an attempt, each excused by its cause (at-least-once delivery). */
  readonly excusedDuplicates: Readonly<Record<DuplicateCause, number>>;
  readonly tolerated: ReadonlyMap<InvariantName, ToleratedViolation>;
}

/** A violated invariant: the seed, the step and the trace leading to it, and how to replay it. */
export class SimulationFailure extends Error {
  constructor(
    readonly invariant: InvariantName,
    readonly seed: number,
    readonly step: number,
    message: string,
  ) {
    super(message);
  }
}

const realSetImmediate = globalThis.setImmediate;
let pendingImmediates = 0;
function countedSetImmediate(run: (...args: unknown[]) => void, ...args: unknown[]): NodeJS.Immediate {
  pendingImmediates++;
  return realSetImmediate(() => {
    pendingImmediates--;
    run(...args);
  });
}

/** What a request of an instance whose own network is down gets: no route, whatever the receiver. */
function networkUnreachable(durationMs: number): AttemptResult {
  return { outcome: 'connect_error', statusCode: null, durationMs, error: 'ENETUNREACH', responseExcerpt: null };
}

/** The engine's log lines go to the trace (the world of the run in progress). */
let logSink: ((line: string) => void) | null = null;
const traceLogger: LoggerService = {
  log: () => undefined,
  debug: () => undefined,
  verbose: () => undefined,
  warn: (message: unknown) => logSink?.(`  log warn: ${String(message)}`),
  error: (message: unknown) => logSink?.(`  log error: ${String(message)}`),
};

/** Runs one seed: random steps, then a quiet phase until every delivery is final; throws SimulationFailure on a violation. */
export async function runSeed(options: SimOptions): Promise<SimResult> {
  const world = new World(options);
  const previousLogger = (Logger as unknown as { staticInstanceRef?: LoggerService }).staticInstanceRef;
  Logger.overrideLogger(traceLogger);
  // Counted, so that the simulation knows when the engines are at rest (GroupCommit and AfterCommit use it).
  globalThis.setImmediate = countedSetImmediate as typeof setImmediate;
  logSink = (line) => world.trace(line);
  const unhandled = (reason: unknown) => world.violate('no-unhandled-rejection', 'unhandled', `unhandled rejection: ${String(reason)}`);
  process.on('unhandledRejection', unhandled);
  try {
    return await world.run();
  } finally {
    process.off('unhandledRejection', unhandled);
    globalThis.setImmediate = realSetImmediate;
    Logger.overrideLogger(previousLogger ?? false);
    logSink = null;
  }
}

class World implements StoreWorld {
  readonly time = new SimTime(START);
  readonly partitions = new InMemoryPartitionLeases();
  readonly store = new InMemoryOutboxStore(this.partitions);
  private readonly random: Prng;
  private readonly enabled: ReadonlySet<InvariantName>;
  private readonly tolerates: (invariant: InvariantName, detail: string) => boolean;
  private readonly mutation: Mutation | undefined;
  /** Deliveries PENDING when last seen: one that vanishes (not finished, so no purge may take it) is lost. */
  private readonly pendingSeen = new Set<number>();
  private readonly toleratedSeen = new Map<InvariantName, ToleratedViolation>();
  private readonly toleratedKeys = new Set<string>();
  private readonly lines: { step: number; text: string }[] = [];
  step = 0;
  /** Writes and requests so far: the invariants over the tables are checked again when it moved (or 5 s passed). */
  activity = 0;
  private checked = { activity: -1, at: 0 };
  /** Who took each lease (tokens are random: they never decide anything, only name the holder). */
  readonly tokenOwner = new Map<string, Instance>();
  /** The first violation not tolerated: thrown once the engines are at rest (never into the engine's own calls). */
  private failure: Error | null = null;

  private readonly instances: Instance[] = [];
  private generation = 0;
  private readonly settings: DeliverySettings;
  private readonly roles: ProcessRole[];
  /** The largest difference between two instances' clocks this run allows (at most the tolerated MAX_CLOCK_SKEW_MS). */
  private readonly maxSkewMs: number;
  /** The largest difference between two instances' clocks so far (retry-delays allows that much). */
  private skewSeenMs = 0;
  private readonly offsetsSeen: number[] = [];
  readonly database: DatabaseFaults;
  /** Instances whose own network is down (they reach the database, not the receivers). */
  private readonly egress: EgressFaults;
  private readonly faults: { prefsFail: number; pause: number; pauseAtSend: number };

  private readonly users: number[];
  private readonly types: readonly EventType[];
  /** Per `userId/type`: the URL and whether WEBHOOK is on. */
  private readonly webhooks = new Map<string, { userId: number; type: EventType; url: string; enabled: boolean; streamId: number }>();
  private readonly modes = new Map<string, Mode>();
  /** Users with ordered delivery on (every URL of theirs): `ordered-delivery` checks their streams. */
  private readonly orderedUsers = new Set<number>();
  private readonly streamIds = new Map<string, number>();
  /** Deliveries seen final, and when the latest delivery of each stream was (global time): an ordered row's schedule starts then. */
  private readonly finalSeen = new Set<number>();
  private readonly streamFinalAt = new Map<number, number>();

  readonly events = new Map<string, SimEvent>();
  private readonly transactions: HostTransaction[] = [];
  private readonly tracks = new Map<number, DeliveryTrack>();
  private seenDeliveryId = 0;
  private readonly sendsByClaim = new Map<string, SendRecord>();
  /** `token#id` of the leases an instance let go of after a failed release, cancel or record (see noteLeasesGivenUp). */
  private readonly leasesGivenUp = new Set<string>();
  private readonly inFlightByEndpoint = new Map<string, SendRecord[]>();
  /**
   * Time no instance could deliver: none alive in a delivering role, or every one held up by a database outage. The
   * schedule's deadlines move by it.
   */
  private haltedMs = 0;
  private requests = 0;
  private readonly excusedDuplicates: Record<DuplicateCause, number> = { crash: 0, pause: 0, outage: 0 };
  /** `deliveryId#attemptNumber` → how many times an instance announced it on `attemptRecorded`. */
  private readonly announced = new Map<string, number>();
  /**
   * Per endpoint key: the answers of the requests to it, all instances together, in order (global time), and when the
   * sending process saw each (later when it was paused then: its timeout fired, or it read the answer, as it woke).
   */
  private readonly answers = new Map<string, { at: number; seenAt: number; unreachable: boolean }[]>();
  /** Circuits opened, kept for the next owner, closed by an answer: what `circuit-inherited` checks. */
  private readonly circuits = new CircuitOpenings();
  private nextEvent = 1;
  private nextTx = 1;

  constructor(private readonly options: SimOptions) {
    this.random = new Prng(options.seed);
    this.egress = new EgressFaults(options.seed);
    this.mutation = options.mutation && MUTATIONS[options.mutation];
    this.mutation?.store?.(this.store);
    this.enabled = options.invariants ?? new Set(INVARIANT_NAMES);
    this.tolerates = options.tolerates ?? (() => false);
    const r = this.random;
    const concurrency = r.int(2, 6);
    this.settings = {
      concurrency,
      perEndpointConcurrency: r.int(1, 3),
      circuitBreaker: { failuresToOpen: r.int(2, 5), coolDownMs: 30 * SECOND },
      batchSize: r.int(2, 10),
      leaseMs: LEASE_MS,
      timeoutMs: TIMEOUT_MS,
      shutdownGraceMs: 10 * SECOND,
      userAgent: 'simulation',
      role: 'all',
      wakeUrl: null,
    };
    const count = r.int(2, 4);
    this.roles = Array.from({ length: count }, (_, i) => (i === 0 ? 'all' : r.weighted({ all: 6, worker: 2, api: 1 })));
    this.maxSkewMs = r.pick([0, 0, 2 * SECOND, MAX_CLOCK_SKEW_MS]);
    this.database = new DatabaseFaults(this.time, r, {
      latency: r.pick([0, 0.1, 0.3]),
      fail: r.pick([0, 0, 0.005, 0.02]),
      unknownOutcome: r.pick([0, 0, 0.005, 0.02]),
      outage: r.pick([0, 0.5, 1, 2]),
    });
    this.faults = { prefsFail: r.pick([0, 0.01]), pause: r.pick([0, 0, 0.5, 1]), pauseAtSend: r.pick([0, 0, 0.002, 0.01]) };
    this.users = Array.from({ length: r.int(2, 4) }, (_, i) => i + 1);
    // Drawn apart from the run's own random numbers, so that every seed runs the interleavings it ran before ordering.
    const ordering = new Prng(options.seed * 7_919 + 104_729);
    for (const userId of this.users) if (ordering.chance(0.5)) this.orderedUsers.add(userId);
    this.types = WEBHOOK_EVENT_TYPES.slice(0, 3);
    for (const userId of this.users) {
      for (const host of ['a', 'b']) this.modes.set(`u${userId}-${host}.example`, r.chance(0.8) ? 'up' : this.randomMode());
      for (const type of this.types) {
        const host = `u${userId}-${r.pick(['a', 'b'])}.example`;
        // Ordered users post every type of a host to one URL: one stream across types.
        const url = this.orderedUsers.has(userId) ? `https://${host}/hooks` : `https://${host}/hooks/${type}`;
        const streamId = this.streamOf(userId, url);
        this.webhooks.set(webhookKey(userId, type), { userId, type, url, enabled: r.chance(0.9), streamId });
      }
    }
  }

  /** The user's stream of `url` (one per user and URL, made at its first use), ordered for the users who chose it. */
  private streamOf(userId: number, url: string): number {
    const key = `${userId} ${url}`;
    let id = this.streamIds.get(key);
    if (id === undefined) {
      id = this.store.addStream(userId, this.orderedUsers.has(userId));
      this.streamIds.set(key, id);
    }
    return id;
  }

  async run(): Promise<SimResult> {
    const s = this.settings;
    this.trace(
      `seed ${this.options.seed}: ${this.roles.length} instances (${this.roles.join(', ')}), concurrency ${s.concurrency}, ` +
        `per endpoint ${s.perEndpointConcurrency}, batch ${s.batchSize}, circuit after ${s.circuitBreaker.failuresToOpen}, ` +
        `skew up to ${this.maxSkewMs} ms, database ${JSON.stringify(this.database.rates)}, faults ${JSON.stringify(this.faults)}, ` +
        `users ${this.users.length}`,
    );
    this.roles.forEach((role, slot) => this.start(slot, role));
    await this.settle();
    for (this.step = 1; this.step <= this.options.steps; this.step++) {
      await this.randomStep();
      this.maybeLoseNetwork();
      await this.settle();
      this.check();
    }
    await this.quiesce();
    this.checkAllAnnounced();
    this.check();
    return {
      seed: this.options.seed,
      steps: this.step,
      simulatedMs: this.time.now - START,
      events: this.events.size,
      requests: this.requests,
      excusedDuplicates: this.excusedDuplicates,
      tolerated: this.toleratedSeen,
    };
  }

  // ---- the steps ---------------------------------------------------------------------------------------------------

  private async randomStep(): Promise<void> {
    const r = this.random;
    const alive = this.instances.filter((instance) => instance.alive);
    const dead = this.roles.map((_, slot) => slot).filter((slot) => !this.instances.some((i) => i.slot === slot && i.alive));
    const ready = this.transactions.filter((t) => t.ready && t.tx.state === 'open');
    const step = r.weighted({
      publish: alive.length > 0 ? 12 : 0,
      burst: alive.length > 0 ? 1 : 0,
      publishWithin: alive.length > 0 ? 6 : 0,
      commit: ready.length > 0 ? 7 : 0,
      rollback: ready.length > 0 ? 2 : 0,
      advance: 35,
      redeliver: alive.length > 0 && this.store.deliveries.size > 0 ? 3 : 0,
      recover: alive.length > 0 ? 1.5 : 0,
      purge: alive.length > 0 ? 3 : 0,
      tick: alive.length > 0 ? 2 : 0,
      crash: alive.length > 0 ? 1.2 : 0,
      shutdown: alive.length > 0 ? 0.8 : 0,
      restart: dead.length > 0 ? 4 : 0,
      toggle: 1,
      endpoint: 3,
      skew: this.maxSkewMs > 0 ? 1 : 0,
      outage: this.database.rates.outage,
      pause: alive.length > 0 ? this.faults.pause : 0,
    });
    switch (step) {
      case 'publish':
        return this.publish(r.pick(alive));
      case 'burst':
        return this.publish(r.pick(alive), r.int(10, 40));
      case 'publishWithin':
        return this.publishWithin(r.pick(alive));
      case 'commit': {
        const t = r.pick(ready);
        t.tx.commit();
        this.activity++;
        for (const event of t.events) event.acked = true;
        this.trace(`commit ${t.tx.name} on ${t.instance.name}: ${t.events.map((e) => e.id).join(' ')} acknowledged`);
        this.observeStore();
        return;
      }
      case 'rollback': {
        const t = r.pick(ready);
        t.tx.rollback();
        this.trace(`rollback ${t.tx.name} on ${t.instance.name}: ${t.events.map((e) => e.id).join(' ')}`);
        return;
      }
      case 'advance': {
        const span = r.weighted({ short: 40, seconds: 30, minute: 20, long: 10, hours: 3 });
        const ms = {
          short: r.int(0, SECOND),
          seconds: r.int(SECOND, 10 * SECOND),
          minute: r.int(10 * SECOND, 70 * SECOND),
          long: r.int(MINUTE, 30 * MINUTE),
          hours: r.int(30 * MINUTE, 3 * HOUR),
        }[span];
        this.trace(`advance ${formatMs(ms)}`);
        return this.advanceTo(this.time.now + ms);
      }
      case 'redeliver':
        return this.redeliver(r.pick(alive));
      case 'recover': {
        const instance = r.pick(alive);
        const userId = r.pick(this.users);
        const now = instance.clock.now();
        this.trace(`recover user ${userId} on ${instance.name}`);
        void instance.engine.recover({ userId, since: now - 24 * HOUR, until: now }).then(
          ({ queued }) => this.trace(`  recover user ${userId}: ${queued} queued`),
          (error: Error) => this.trace(`  recover user ${userId} failed: ${error.message}`),
        );
        return;
      }
      case 'purge': {
        const instance = r.pick(alive);
        const status = r.pick([DeliveryStatus.DELIVERED, DeliveryStatus.FAILED, DeliveryStatus.CANCELLED] as const);
        this.trace(`purge ${status} on ${instance.name}`);
        void instance.engine.purge(status, instance.clock.now() - RETENTION_MS[status], 20).then(
          (batch) => batch.deliveries > 0 && this.trace(`  purged ${batch.deliveries} ${status}, ${batch.events} events`),
          (error: Error) => this.trace(`  purge failed: ${error.message}`),
        );
        return;
      }
      case 'tick': {
        const instance = r.pick(alive);
        this.trace(`scheduler tick on ${instance.name}`);
        void instance.scheduler.tick().catch(() => undefined);
        return;
      }
      case 'crash':
        return this.crash(r.pick(alive));
      case 'shutdown':
        return this.shutdown(r.pick(alive));
      case 'restart': {
        const slot = r.pick(dead);
        this.start(slot, this.roles[slot]);
        return;
      }
      case 'toggle': {
        const webhook = r.pick([...this.webhooks.values()]);
        webhook.enabled = !webhook.enabled;
        this.trace(`user ${webhook.userId} turns WEBHOOK ${webhook.enabled ? 'on' : 'off'} for ${webhook.type}`);
        return;
      }
      case 'endpoint': {
        const host = r.pick([...this.modes.keys()]);
        const mode = this.randomMode();
        this.modes.set(host, mode);
        this.trace(`endpoint ${host} is now ${mode}`);
        return;
      }
      case 'skew': {
        const instance = r.pick(alive.length > 0 ? alive : this.instances);
        instance.clock.skewMs = this.randomSkew();
        this.trace(`clock of ${instance.name} now ${instance.clock.skewMs} ms off`);
        return;
      }
      case 'outage': {
        const outage = this.database.startOutage();
        if (!outage) return;
        this.trace(`database outage (${outage.kind}) for ${formatMs(outage.until - outage.from)}`);
        return;
      }
      case 'pause':
        this.pause(r.pick(alive));
        return;
    }
  }

  /** After a step, maybe one delivering instance loses its own network for a while (its own stream of chances). */
  private maybeLoseNetwork(): void {
    const deliverers = this.instances.filter((instance) => instance.alive && instance.role !== 'api');
    const lost = this.egress.maybeStart(this.time.now, deliverers);
    if (lost)
      this.trace(`network of ${lost.instance.name} down for ${formatMs(lost.until - this.time.now)} (the database still answers it)`);
  }

  /** An instance's clock offset: any two instances differ by at most maxSkewMs. */
  private randomSkew(): number {
    const skew = this.random.int(-this.maxSkewMs / 2, this.maxSkewMs / 2);
    // Rows keep the times a clock stamped after its process is gone: every offset so far counts.
    this.offsetsSeen.push(skew);
    const offsets = this.offsetsSeen;
    this.skewSeenMs = Math.max(this.skewSeenMs, Math.max(...offsets) - Math.min(...offsets));
    return skew;
  }

  /** A process pause (GC, SIGSTOP, VM migration) of 1 to 90 s: none of its timers fires and no answer reaches it meanwhile. */
  private pause(instance: Instance): void {
    const until = Math.max(instance.clock.pausedUntil, this.time.now + this.random.int(SECOND, 90 * SECOND));
    // A pause that starts while one runs lengthens it: one pause, from the first one's start (seed 102821).
    const running = instance.clock.pausedUntil > this.time.now ? instance.pauses.pop() : undefined;
    instance.clock.pausedUntil = until;
    instance.pauses.push({ from: running?.from ?? this.time.now, until });
    instance.stalledUntil = Math.max(instance.stalledUntil, until);
    this.time.schedule(until, () => undefined);
    this.trace(`pause ${instance.name} for ${formatMs(until - this.time.now)}`);
  }

  private randomMode(): Mode {
    return this.random.weighted({ up: 30, slow: 10, flaky: 15, error: 10, timeout: 10, hang: 5, refused: 15 });
  }

  private newEvents(count = this.random.int(1, 3)): { events: SimEvent[]; news: NewEvent[]; targets: Map<string, WebhookTarget> } | null {
    const webhooks = [...this.webhooks.values()].filter((webhook) => webhook.enabled);
    if (webhooks.length === 0) return null;
    const chosen = Array.from({ length: count }, () => this.random.pick(webhooks));
    const targets = new Map<string, WebhookTarget>();
    const news = chosen.map((webhook) => {
      targets.set(webhookKey(webhook.userId, webhook.type), this.targetOf(webhook));
      const id = `e${this.nextEvent++}`;
      const body = JSON.stringify({ id, type: webhook.type });
      return { id, userId: webhook.userId, type: webhook.type, body, streamId: webhook.streamId };
    });
    return { events: news.map((e) => this.addEvent(e, null)), news, targets };
  }

  private addEvent(e: NewEvent, tx: SimTransaction | null): SimEvent {
    const event: SimEvent = {
      id: e.id,
      userId: e.userId,
      type: e.type,
      tx,
      acked: false,
      deliveredAt: null,
      purged: false,
    };
    this.events.set(e.id, event);
    return event;
  }

  private publish(instance: Instance, count?: number): void {
    const batch = this.newEvents(count);
    if (!batch) return;
    const ids = batch.events.map((e) => e.id).join(' ');
    this.trace(`publish ${ids} on ${instance.name}`);
    void instance.engine.enqueue(batch.news, batch.targets).then(
      () => {
        for (const event of batch.events) event.acked = true;
        this.trace(`  publish ${ids} acknowledged`);
      },
      (error: Error) => this.trace(`  publish ${ids} failed: ${error.message}`),
    );
  }

  private publishWithin(instance: Instance): void {
    const batch = this.newEvents();
    if (!batch) return;
    const tx = new SimTransaction(`tx${this.nextTx++}`);
    const events = batch.news.map((e) => {
      this.events.delete(e.id);
      return this.addEvent(e, tx);
    });
    const host: HostTransaction = { tx, instance, events, ready: false };
    this.transactions.push(host);
    const ids = events.map((e) => e.id).join(' ');
    this.trace(`publish ${ids} inside ${tx.name} on ${instance.name}`);
    void instance.engine.enqueueWithin(tx as unknown as EntityManager, batch.news, batch.targets).then(
      () => {
        host.ready = true;
      },
      (error: Error) => {
        this.trace(`  publish inside ${tx.name} failed (${error.message}): the host rolls back`);
        if (tx.state === 'open') tx.rollback();
      },
    );
  }

  /** As DeliveriesService.redeliver: a delivery still PENDING is refused (409), any other gets a new cycle of its event. */
  private redeliver(instance: Instance): void {
    const row = this.random.pick([...this.store.deliveries.values()]);
    if (row.status === DeliveryStatus.PENDING) {
      this.trace(`redeliver delivery ${row.id} (${row.eventId}): refused, still PENDING`);
      return;
    }
    this.trace(`redeliver delivery ${row.id} (${row.eventId}, ${row.status}) on ${instance.name}`);
    void instance.engine.redeliver({ id: row.eventId, userId: row.userId, type: row.type }).then(
      (again) =>
        this.trace(
          `  redelivery of ${row.eventId}: ${again === null ? 'event gone' : 'running' in again ? `delivery ${again.running} running` : `delivery ${again.started}`}`,
        ),
      (error: Error) => this.trace(`  redelivery of ${row.eventId} failed: ${error.message}`),
    );
  }

  private start(slot: number, role: ProcessRole): void {
    const generation = this.generation++;
    const skew = this.randomSkew();
    const clock = new SimClock(this.time, skew);
    const settings = { ...this.settings, role };
    const events = new DeliveryEvents();
    const instance = {
      slot,
      name: `i${slot + 1}${generation >= this.roles.length ? `.${generation}` : ''}`,
      role,
      clock,
      settings,
      alive: true,
      startedAt: this.time.now,
      claims: new Map<string, ClaimedDelivery[]>(),
      inFlight: new Map<string, number>(),
      inFlightTotal: 0,
      pauses: [],
      stalledUntil: 0,
      leasesReadAt: Number.NEGATIVE_INFINITY,
      leasesSeen: new Set(),
      claimedAt: Number.NEGATIVE_INFINITY,
      tookAt: Number.NEGATIVE_INFINITY,
      partitionLeases: new Map(),
    } as Omit<Instance, 'engine' | 'scheduler'> as Instance;
    const store = new InstanceStore(this, instance);
    const sender = { send: (request: WebhookRequest) => this.send(instance, request), close: () => Promise.resolve() };
    const preferences = {
      webhookTargets: (pairs: readonly { userId: number; type: EventType }[]) => this.webhookTargets(pairs),
    };
    const afterCommit = {
      transactionOf: (transaction: unknown) => {
        if (!(transaction instanceof SimTransaction) || transaction.state !== 'open') throw new TypeError('not inside an open transaction');
        return transaction;
      },
      defer: (transaction: SimTransaction, work: () => void, rolledBack?: () => void) => transaction.defer(work, rolledBack),
    };
    const engineSettings = this.mutation?.settings?.(settings) ?? settings;
    const ownership = new PartitionOwnership(store.partitionLeases(), clock, engineSettings, instance.name);
    this.mutation?.ownership?.(ownership);
    const engine = new OutboxEngine(
      store,
      preferences as unknown as PreferencesService,
      sender as unknown as WebhookSender,
      clock,
      events,
      engineSettings,
      afterCommit as unknown as AfterCommit,
      ownership,
    );
    this.mutation?.engine?.(engine, events);
    Object.assign(instance, { engine, scheduler: new DeliveryScheduler(engine, events, clock) });
    events.attemptRecorded.subscribe(({ deliveryId, attemptNumber }) => this.noteAnnounced(instance, deliveryId, attemptNumber));
    events.circuitOpened.subscribe(({ userId, host, until }) => {
      const endpoint = `${userId} ${host}`;
      this.circuits.opened(instance, endpoint, this.time.now, until - clock.skewMs);
      this.trace(`  ${instance.name}: circuit of ${endpoint} open until +${formatMs(until - clock.now())}`);
    });
    this.instances.push(instance);
    void engine.onApplicationBootstrap();
    this.everyMinute(instance);
    this.trace(`start ${instance.name} (${role}, clock ${skew} ms off)`);
  }

  /** The scheduler's cron: at each minute of the instance's own clock. */
  private everyMinute(instance: Instance): void {
    const now = instance.clock.now();
    instance.clock.setTimeout(
      () => {
        void instance.scheduler.tick().catch(() => undefined);
        this.everyMinute(instance);
      },
      Math.ceil((now + 1) / MINUTE) * MINUTE - now,
    );
  }

  /** Who holds each partition's running lease, as the partitions table says (by instance name). */
  private partitionOwners(now: number): Map<number, string> {
    const owners = new Map<number, string>();
    for (const [partition, row] of this.partitions.partitions)
      if (row.holder !== null && row.leaseUntil > now) owners.set(partition, row.holder);
    return owners;
  }

  /**
   * A graceful shutdown (a rolling deploy, a scale-in): the engine hands back what it has not started, drains what is in
   * flight and gives its partitions back; then the process exits.
   */
  private shutdown(instance: Instance): void {
    this.trace(`shutdown ${instance.name}`);
    void instance.engine.beforeApplicationShutdown().then(() => {
      if (!instance.alive) return;
      this.trace(`  ${instance.name} stopped`);
      this.crash(instance, 'exit');
    });
  }

  private crash(instance: Instance, how: 'crash' | 'exit' = 'crash'): void {
    instance.alive = false;
    instance.clock.halt();
    for (const t of this.transactions) {
      if (t.instance === instance && t.tx.state === 'open') {
        t.tx.rollback();
        this.trace(`  ${t.tx.name} rolled back with its process`);
      }
    }
    if (how === 'crash') this.trace(`crash ${instance.name}`);
  }

  private targetOf(webhook: { url: string; streamId: number; userId: number }): WebhookTarget {
    return { url: webhook.url, secret: 'simulation-secret', streamId: webhook.streamId, ordered: this.orderedUsers.has(webhook.userId) };
  }

  private webhookTargets(pairs: readonly { userId: number; type: EventType }[]): Promise<Map<string, WebhookTarget>> {
    this.activity++;
    if (this.random.chance(this.faults.prefsFail)) return Promise.reject(new Error('simulated preferences read failure'));
    const targets = new Map<string, WebhookTarget>();
    for (const { userId, type } of pairs) {
      const webhook = this.webhooks.get(webhookKey(userId, type));
      if (webhook?.enabled) targets.set(webhookKey(userId, type), this.targetOf(webhook));
    }
    return Promise.resolve(targets);
  }

  // ---- time and rest -----------------------------------------------------------------------------------------------

  /** Runs everything due up to `target` in order, coming to rest and checking the invariants after each. */
  private async advanceTo(target: number): Promise<void> {
    for (;;) {
      const at = this.time.nextAt();
      if (at === null || at > target) break;
      this.account(at);
      this.time.runNext(target);
      await this.settle();
      // Unchanged rows are looked at again every 15 s: what depends on time alone (a delivery not picked up, one not final
      // within its schedule) stays wrong until it changes, so it is seen all the same.
      if (this.activity !== this.checked.activity || this.time.now - this.checked.at >= 15 * SECOND) this.check();
    }
    this.account(target);
    this.time.now = Math.max(this.time.now, target);
    this.check();
  }

  /** Time no instance could deliver (the database down, or every delivering instance paused or dead) moves the deadlines. */
  private account(to: number): void {
    const now = this.time.now;
    const deliverers = this.instances.filter((instance) => instance.alive && instance.role !== 'api');
    const pausedUntil = Math.min(to, ...deliverers.map((instance) => Math.max(instance.clock.pausedUntil, now)));
    const outageUntil = Math.min(to, this.database.current()?.until ?? now);
    this.haltedMs += Math.max(pausedUntil, outageUntil) - now;
  }

  /** Lets the engines run until nothing moves: every microtask and setImmediate chain done. */
  private async settle(): Promise<void> {
    for (let turn = 0; ; turn++) {
      if (turn > SETTLE_TURNS_MAX) {
        this.violate('no-livelock', 'livelock', `still busy after ${SETTLE_TURNS_MAX} turns of the event loop`);
        return;
      }
      // Every microtask runs before this turn ends; what continues later was handed to setImmediate (counted).
      await new Promise<void>((resolve) => realSetImmediate(resolve));
      if (pendingImmediates === 0) return;
    }
  }

  /** No new work: open transactions end, crashed instances restart, time runs until every delivery is final. */
  private async quiesce(): Promise<void> {
    this.trace('quiet phase: no new work, crashed instances restart, time runs out the schedule');
    for (const t of this.transactions) {
      if (t.tx.state !== 'open') continue;
      if (t.ready) {
        t.tx.commit();
        for (const event of t.events) event.acked = true;
        this.trace(`commit ${t.tx.name}`);
        this.observeStore();
      } else t.tx.rollback();
    }
    for (let slot = 0; slot < this.roles.length; slot++) {
      if (!this.instances.some((instance) => instance.slot === slot && instance.alive)) this.start(slot, this.roles[slot]);
    }
    await this.settle();
    const deadlines = [...this.tracks.values()].map((track) => track.deadline + this.haltedMs - track.haltedAtCreation);
    const end = Math.max(this.time.now, ...deadlines) + 2 * MINUTE;
    while (this.time.now < end && this.anyPending()) {
      this.step++;
      this.trace(`advance ${formatMs(10 * MINUTE)} (quiet)`);
      await this.advanceTo(Math.min(end, this.time.now + 10 * MINUTE));
    }
  }

  private anyPending(): boolean {
    return [...this.store.deliveries.values()].some((row) => row.status === DeliveryStatus.PENDING);
  }

  // ---- the sender --------------------------------------------------------------------------------------------------

  private send(instance: Instance, request: WebhookRequest): Promise<AttemptResult> {
    this.activity++;
    this.requests++;
    const eventId = request.headers['x-service-event-id'];
    const attempt = Number(request.headers['x-service-attempt']);
    // The latest claim of that event and attempt number (two only when the event has two PENDING deliveries).
    const claim = instance.claims.get(`${eventId}#${attempt}`)?.pop();
    if (!claim) {
      this.failure ??= new Error(`simulation: ${instance.name} sent ${eventId} attempt ${attempt} without a claim it knows`);
      return Promise.reject(this.failure);
    }
    // A pause between the engine's last look at the lease and the request: the request leaves when the process runs again.
    if (this.random.chance(this.faults.pauseAtSend)) this.pause(instance);
    // The partition's lease as the engine last looked at it: a take answered while the process was paused (its answer runs
    // first when the process wakes) does not cover a request checked before the pause.
    const partitionLeaseAtCheck = instance.partitionLeases.get(partitionOf(claim.userId)) ?? Number.NEGATIVE_INFINITY;
    return new Promise<AttemptResult>((resolve) =>
      instance.clock.whenAwake(() => this.request(instance, claim, request, partitionLeaseAtCheck, resolve)),
    );
  }

  private request(
    instance: Instance,
    claim: ClaimedDelivery,
    request: WebhookRequest,
    partitionLeaseAtCheck: number,
    resolve: (result: AttemptResult) => void,
  ): void {
    const attempt = claim.attemptCount + 1;
    const host = new URL(request.url).host;
    const endpoint = endpointKeyOf(claim.userId, request.url);
    const record = this.checkSend(instance, claim, attempt, endpoint, partitionLeaseAtCheck);
    this.checkInTurn(instance, claim, attempt);
    const egressDown = this.egress.isDown(instance, this.time.now);
    const mode = this.modes.get(host) ?? 'up';
    const result = egressDown ? networkUnreachable(this.random.int(1, 30)) : this.answer(mode);
    this.trace(
      `  ${instance.name} sends ${claim.eventId} (delivery ${claim.id}) attempt ${attempt} to ${host} [${egressDown ? 'its network down' : mode}]`,
    );
    this.time.schedule(this.time.now + result.durationMs, () => {
      this.activity++;
      record.completedAt = this.time.now;
      const list = this.inFlightByEndpoint.get(endpoint)!;
      list.splice(list.indexOf(record), 1);
      instance.inFlight.set(endpoint, instance.inFlight.get(endpoint)! - 1);
      instance.inFlightTotal--;
      const answers = this.answers.get(endpoint) ?? [];
      const answer = { at: this.time.now, seenAt: this.time.now, unreachable: isUnreachable(result.outcome) };
      answers.push(answer);
      if (!isUnreachable(result.outcome)) this.circuits.answered(endpoint);
      this.egress.noteRequest(instance, this.time.now, endpoint, !isUnreachable(result.outcome));
      this.answers.set(endpoint, answers);
      this.trace(
        `  ${claim.eventId} attempt ${attempt} by ${instance.name}: ${result.outcome}${result.statusCode ? ` ${result.statusCode}` : ''}`,
      );
      if (instance.alive)
        instance.clock.whenAwake(() => {
          answer.seenAt = this.time.now;
          resolve(result);
        });
    });
  }

  private answer(mode: Mode): AttemptResult {
    const r = this.random;
    const ok = (durationMs: number): AttemptResult => ({
      outcome: 'success',
      statusCode: 200,
      durationMs,
      error: null,
      responseExcerpt: 'ok',
    });
    const status = (code: number): AttemptResult => ({
      outcome: 'http_error',
      statusCode: code,
      durationMs: r.int(5, 800),
      error: `HTTP ${code}`,
      responseExcerpt: null,
    });
    switch (mode) {
      case 'up':
        return ok(r.int(5, 1_500));
      case 'slow':
        return ok(r.int(2_000, TIMEOUT_MS - 1));
      case 'flaky':
        return r.chance(0.5) ? status(503) : ok(r.int(5, 1_500));
      case 'error':
        return status(r.pick([500, 502, 503]));
      case 'timeout':
        return {
          outcome: 'timeout',
          statusCode: null,
          durationMs: TIMEOUT_MS,
          error: 'no answer within the deadline',
          responseExcerpt: null,
        };
      case 'hang':
        return {
          outcome: 'timeout',
          statusCode: 200,
          durationMs: TIMEOUT_MS,
          error: 'body stalled after the status line',
          responseExcerpt: null,
        };
      case 'refused':
        return { outcome: 'connect_error', statusCode: null, durationMs: r.int(1, 30), error: 'ECONNREFUSED', responseExcerpt: null };
    }
  }

  /** The checks made as a request goes out; returns its record. */
  /** `ordered-delivery`: a request of an ordered stream's delivery leaves while no delivery queued before it there is PENDING. */
  private checkInTurn(instance: Instance, claim: ClaimedDelivery, attempt: number): void {
    const row = this.store.deliveries.get(claim.id);
    if (!row || !this.isOrderedStream(row.streamId)) return;
    const before = this.pendingBefore(row);
    if (before !== undefined)
      this.violate(
        'ordered-delivery',
        `order ${claim.id}#${attempt}`,
        `${claim.eventId} (delivery ${claim.id}, sequence ${row.sequence}) attempt ${attempt} sent by ${instance.name} while delivery ` +
          `${before.id} (sequence ${before.sequence}, ${before.attemptCount} attempts) of its ordered stream ${row.streamId} is PENDING`,
      );
  }

  /** Whether the stream is an ordered one: the world's own record, not the store's (a mutation may break the store). */
  private isOrderedStream(streamId: number | null): boolean {
    return streamId !== null && this.orderedUsers.has(this.store.streams.get(streamId)?.userId ?? 0);
  }

  /** The first PENDING delivery queued before `row` in its stream, if any. */
  private pendingBefore(row: DeliveryRow): DeliveryRow | undefined {
    let first: DeliveryRow | undefined;
    for (const other of this.store.deliveries.values())
      if (
        other.streamId === row.streamId &&
        other.id < row.id &&
        other.status === DeliveryStatus.PENDING &&
        (!first || other.id < first.id)
      )
        first = other;
    return first;
  }

  private checkSend(
    instance: Instance,
    claim: ClaimedDelivery,
    attempt: number,
    endpoint: string,
    partitionLeaseAtCheck: number,
  ): SendRecord {
    const now = this.time.now;
    const event = this.events.get(claim.eventId);
    const what = `${claim.eventId} (delivery ${claim.id}) attempt ${attempt} by ${instance.name}`;
    if (event?.tx && event.tx.state !== 'committed')
      this.violate('commit-before-send', `tx ${claim.eventId}`, `${what} sent while its host transaction is ${event.tx.state}`);
    if (attempt < 1 || attempt > MAX_ATTEMPTS)
      this.violate('attempt-numbers', `n ${claim.id}`, `${what}: attempt number out of 1..${MAX_ATTEMPTS}`);
    const track = this.trackOf(claim.id);
    const earlier = track?.sends.get(attempt) ?? [];
    const leaseUntil = claim.lockedUntil - instance.clock.skewMs;
    // Sent after its lease could cover it because the process was paused since its last look: at-least-once allows that
    // request (a repeat, another instance's request alongside it), nothing else does.
    const late = this.pausedPast(instance, now, leaseUntil);
    if (!late && now + TIMEOUT_MS + LEASE_MARGIN_MS > leaseUntil)
      this.violate(
        'no-duplicate-send',
        `lease ${claim.id}#${attempt}`,
        `${what} starts ${formatMs(now + TIMEOUT_MS + LEASE_MARGIN_MS - leaseUntil)} too late for its lease (ends ${this.at(leaseUntil)}) to cover its deadline, record budget and the tolerated skew`,
      );
    if (track && !late && earlier.length === 0 && attempt !== track.recordedEnd.size + 1)
      this.violate(
        'attempt-numbers',
        `n ${claim.id}#${attempt}`,
        `${what}: ${track.recordedEnd.size} attempt(s) recorded, so the next is ${track.recordedEnd.size + 1}`,
      );
    if (earlier.length > 0) {
      // A repeat is excused only by what took the first sender's lease, or by a pause that made this request late.
      const causes = earlier.map((send) => this.lostLease(send) ?? (late ? 'pause' : null));
      const unexcused = earlier.filter((_, index) => causes[index] === null);
      if (unexcused.length === 0) this.excusedDuplicates[causes[causes.length - 1]!]++;
      else
        this.violate(
          'no-duplicate-send',
          `dup ${claim.id}#${attempt}`,
          `${what} sent again: first sent by ${unexcused[0].instance.name} at ${this.at(unexcused[0].startedAt)}, ` +
            `${unexcused[0].completedAt === null ? 'still in flight' : `answered at ${this.at(unexcused[0].completedAt)}`}, its record ${unexcused[0].record}`,
        );
    }
    const row = this.store.deliveries.get(claim.id);
    if (!late && row?.status === DeliveryStatus.DELIVERED)
      this.violate('no-request-for-delivered', `d ${claim.id}`, `${what}: the delivery is DELIVERED`);
    else if (!late && event && event.deliveredAt !== null && track?.origin !== 'redelivery')
      this.violate(
        'no-request-for-delivered',
        `e ${claim.eventId}#${claim.id}`,
        `${what}: the event was delivered at ${this.at(event.deliveredAt)}, and this delivery is a ${track?.origin ?? 'purged one'}, not a redelivery a user asked for`,
      );
    if (attempt >= 2 && track) {
      const previousEnd = track.recordedEnd.get(attempt - 1);
      const delay = RETRY_DELAYS_MS[attempt - 2];
      // Due times come from the clock of the instance that recorded attempt n: one whose clock runs ahead of it starts
      // attempt n+1 that much early (by at most the skew this run has had, itself at most the tolerated MAX_CLOCK_SKEW_MS).
      if (previousEnd !== undefined && now < previousEnd + delay - this.skewSeenMs)
        this.violate(
          'retry-delays',
          `delay ${claim.id}#${attempt}`,
          `${what} ${formatMs(previousEnd + delay - now)} early: attempt ${attempt - 1} ended at ${this.at(previousEnd)}, the spec's delay is ${formatMs(delay)}`,
        );
    }
    const partition = partitionOf(claim.userId);
    // Sent after the lease of its partition could cover it (the process paused between its check and the request): its
    // partition may have a new owner, whose requests go alongside; the owner's invariants excuse that request, only that.
    const partitionLeaseUntil = partitionLeaseAtCheck - instance.clock.skewMs;
    const lateForOwner = late || this.pausedPast(instance, now, partitionLeaseUntil);
    const perEndpoint = (instance.inFlight.get(endpoint) ?? 0) + 1;
    const inFlight = this.inFlightByEndpoint.get(endpoint) ?? [];
    const onTime = inFlight.filter((send) => !send.late);
    if (!lateForOwner && onTime.length + 1 > instance.settings.perEndpointConcurrency)
      this.violate(
        'endpoint-cap',
        `cap ${claim.id}#${attempt}`,
        `${what}: ${onTime.length + 1} in flight to ${endpoint}, all instances together (cap ${instance.settings.perEndpointConcurrency}; ${onTime.map((send) => `${send.instance.name}: delivery ${send.deliveryId}`).join(', ')})`,
      );
    if (instance.inFlightTotal + 1 > instance.settings.concurrency)
      this.violate(
        'endpoint-cap',
        `total ${claim.id}#${attempt}`,
        `${what}: ${instance.inFlightTotal + 1} in flight (concurrency ${instance.settings.concurrency})`,
      );
    const otherOwners = [...this.inFlightByEndpoint.values()]
      .flat()
      .filter((send) => !send.late && send.instance !== instance && partitionOf(send.userId) === partition);
    if (!lateForOwner && otherOwners.length > 0)
      this.violate(
        'one-owner',
        `owner ${claim.id}#${attempt}`,
        `${what}: partition ${partition} (user ${claim.userId}) has requests of another instance in flight (${otherOwners.map((send) => `${send.instance.name}: delivery ${send.deliveryId}`).join(', ')})`,
      );
    const probe = engineQueuesOf(instance).isHalfOpen(endpoint, instance.clock.now());
    const probes = onTime.filter((send) => send.probe);
    if (probe && !lateForOwner && probes.length > 0)
      this.violate(
        'one-probe',
        `probe ${claim.id}#${attempt}`,
        `${what} probes ${endpoint} (its circuit is half-open in ${instance.name}) while ${probes.length} other probe(s) are in flight (${probes.map((p) => `${p.instance.name}: delivery ${p.deliveryId}`).join(', ')})`,
      );
    const notInherited = lateForOwner
      ? null
      : this.circuits.violation(instance, endpoint, partition, now, this.skewSeenMs, (opener, from, to) =>
          this.unsettled(opener, from, to),
        );
    if (notInherited) this.violate('circuit-inherited', `inherit ${claim.id}#${attempt}`, `${what} to ${endpoint}: ${notInherited}`);
    const record: SendRecord = {
      instance,
      userId: claim.userId,
      deliveryId: claim.id,
      eventId: claim.eventId,
      attempt,
      endpoint,
      startedAt: now,
      completedAt: null,
      record: 'none',
      leaseUntil,
      late: lateForOwner,
      probe,
    };
    inFlight.push(record);
    this.inFlightByEndpoint.set(endpoint, inFlight);
    instance.inFlight.set(endpoint, perEndpoint);
    instance.inFlightTotal++;
    track?.sends.set(attempt, [...earlier, record]);
    this.sendsByClaim.set(`${claim.lockToken}#${claim.id}`, record);
    return record;
  }

  // ---- what the store tells -----------------------------------------------------------------------------------------

  /** What cost a sent attempt's lease before its record was stored, if anything: then a repeat is excused. */
  private lostLease(send: SendRecord): DuplicateCause | null {
    if (send.record === 'stored') return null;
    if (!send.instance.alive) return 'crash';
    if (this.pausedPast(send.instance, send.startedAt, send.leaseUntil)) return 'pause';
    // The engine retries a record until its lease's end less the tolerated skew: only a database down then loses it.
    if (this.database.downDuring(send.leaseUntil - LEASE_MARGIN_MS, send.leaseUntil)) return 'outage';
    return null;
  }

  /**
   * Whether a pause of the instance that ended at or after `since` lasted into the end of a lease ending at `leaseUntil`:
   * past the last moment an attempt may start under it (its deadline and LEASE_MARGIN_MS before the end).
   */
  private pausedPast(instance: Instance, since: number, leaseUntil: number): boolean {
    return instance.pauses.some(
      (pause) => pause.until >= since && pause.from <= leaseUntil && pause.until > leaseUntil - TIMEOUT_MS - LEASE_MARGIN_MS,
    );
  }

  /** `instance` crashed, was paused or stalled, or the database was down, at some time in [from, to]. */
  private unsettled(instance: Instance, from: number, to: number): boolean {
    return (
      !instance.alive ||
      instance.pauses.some((pause) => pause.until >= from && pause.from <= to) ||
      instance.stalledUntil >= from ||
      this.database.downDuring(from, to)
    );
  }

  noteCircuitKept(instance: Instance, circuit: KeptCircuit, applied: boolean): void {
    this.circuits.kept(instance, circuit, this.time.now, applied);
  }

  noteCircuitsRead(instance: Instance, partitions: readonly number[]): void {
    this.circuits.read(instance, partitions, this.time.now);
  }

  /** New deliveries get their track (deadline from now). */
  observeStore(origin: Origin = 'publish', by?: Instance): void {
    if (this.store.lastDeliveryId <= this.seenDeliveryId) return;
    for (const row of this.store.deliveries.values()) {
      if (row.id <= this.seenDeliveryId) continue;
      this.seenDeliveryId = row.id;
      const recovery = row.waitingReason?.startsWith('recovery') ? Math.max(0, row.nextAttemptAt! - row.createdAt) : 0;
      this.tracks.set(row.id, {
        id: row.id,
        eventId: row.eventId,
        deadline: this.time.now + recovery + SCHEDULE_MS + SCHEDULE_SLACK_MS,
        haltedAtCreation: this.haltedMs,
        visibleAt: this.time.now,
        origin,
        by,
        sends: new Map(),
        recordedEnd: new Map(),
        recordedBy: new Map(),
        parked: false,
        roomSince: null,
      });
    }
  }

  noteClaims(instance: Instance, claims: readonly ClaimedDelivery[]): void {
    for (const claim of claims) {
      const key = `${claim.eventId}#${claim.attemptCount + 1}`;
      const list = (instance.claims.get(key) ?? []).filter((held) => this.store.deliveries.get(held.id)?.lockedBy === held.lockToken);
      instance.claims.set(key, [...list.filter((held) => held.id !== claim.id), claim]);
    }
  }

  noteRecording(instance: Instance, attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[]): SendRecord[] {
    return attempts.map(({ claim, record }) => {
      // An attempt skipped for an open circuit is recorded without a request: it ends when it was recorded.
      if (record.result.outcome === 'circuit_open') {
        this.checkSkip(instance, claim, record);
        return unsentRecord(instance, claim, record.startedAt - instance.clock.skewMs, 'pending');
      }
      // When an event has two PENDING deliveries held by one instance, a request (which names the event, not the
      // delivery) may have been attributed to the other one: take that one's send.
      const send =
        this.sendsByClaim.get(`${claim.lockToken}#${claim.id}`) ??
        [...this.sendsByClaim.values()].find(
          (other) =>
            other.instance === instance &&
            other.eventId === claim.eventId &&
            other.attempt === claim.attemptCount + 1 &&
            other.record === 'none',
        );
      if (!send) {
        this.failure ??= new Error(
          `simulation: ${instance.name} records delivery ${claim.id} attempt ${claim.attemptCount + 1} it never sent`,
        );
        return unsentRecord(instance, claim, 0, 'none');
      }
      if (send.record === 'none' || send.record === 'failed') send.record = 'pending';
      return send;
    });
  }

  noteRecorded(
    attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[],
    sends: SendRecord[],
    stored: readonly boolean[] | null,
  ): void {
    attempts.forEach(({ claim, record }, index) => {
      const send = sends[index];
      if (stored === null) {
        if (send.record !== 'stored') send.record = 'failed';
        this.trace(`  record ${claim.eventId} (delivery ${claim.id}) attempt ${send.attempt} by ${send.instance.name}: database error`);
        return;
      }
      // A retry of a record whose first try committed (its answer lost) finds the lease gone: it stays stored.
      if (send.record === 'stored') return;
      send.record = stored[index] ? 'stored' : 'lost-lease';
      this.trace(
        `  record ${claim.eventId} (delivery ${claim.id}) attempt ${send.attempt} by ${send.instance.name}: ${stored[index] ? record.status : 'lease lost'}`,
      );
      if (!stored[index]) return;
      this.trackOf(claim.id)?.recordedEnd.set(send.attempt, send.completedAt ?? this.time.now);
      this.trackOf(claim.id)?.recordedBy.set(send.attempt, send.instance);
      const event = this.events.get(claim.eventId);
      if (record.status === DeliveryStatus.DELIVERED && event) event.deliveredAt = this.time.now;
    });
  }

  /**
   * An attempt skipped for an open circuit: the endpoint's latest answer before the skip, all instances together, was
   * unreachable (a timeout, a refused connection), within the longest cool-down and a probe's deadline of when its sender
   * saw it (a cool-down counts from then: seed 130267, a sender paused 55 s before its timeout fired).
   */
  private checkSkip(instance: Instance, claim: ClaimedDelivery, record: AttemptRecord): void {
    const host = /^circuit open for (\S+) /.exec(record.result.error ?? '')?.[1];
    const endpoint = `${claim.userId} ${host}`;
    const skippedAt = record.startedAt - instance.clock.skewMs;
    const last = this.answers.get(endpoint)?.findLast((answer) => answer.at <= skippedAt);
    const { coolDownMs } = instance.settings.circuitBreaker;
    const within = MAX_COOL_DOWN_FACTOR * coolDownMs + TIMEOUT_MS + this.maxSkewMs;
    if (!last?.unreachable || skippedAt - last.seenAt > within)
      this.violate(
        'no-spurious-skip',
        `skip ${claim.id}#${claim.attemptCount + 1}`,
        `${instance.name} skipped delivery ${claim.id} attempt ${claim.attemptCount + 1} for an open circuit of ${endpoint} at ${this.at(skippedAt)}; ` +
          (last
            ? `its latest answer (${this.at(last.at)}, seen ${this.at(last.seenAt)}) was ${last.unreachable ? `unreachable, seen ${formatMs(skippedAt - last.seenAt)} before` : 'an answer'}`
            : 'it never answered before'),
      );
  }

  /** An instance announced a recorded attempt on `attemptRecorded` (health, metrics and auto-disable listen to it). */
  private noteAnnounced(instance: Instance, deliveryId: number, attemptNumber: number): void {
    const key = `${deliveryId}#${attemptNumber}`;
    const count = (this.announced.get(key) ?? 0) + 1;
    this.announced.set(key, count);
    if (count > 1 || !this.tracks.get(deliveryId)?.recordedEnd.has(attemptNumber))
      this.violate(
        'announced-once',
        `announce ${key}`,
        `${instance.name} announced delivery ${deliveryId} attempt ${attemptNumber} ${count > 1 ? `${count} times` : 'which is not recorded'}`,
      );
  }

  /** At rest after the quiet phase: every recorded attempt was announced, unless its recorder crashed before it could. */
  private checkAllAnnounced(): void {
    for (const track of this.tracks.values())
      for (const attempt of track.recordedEnd.keys()) {
        if (this.announced.has(`${track.id}#${attempt}`)) continue;
        const recorder = track.recordedBy.get(attempt);
        if (recorder && !recorder.alive) continue;
        this.violate(
          'announced-once',
          `unannounced ${track.id}#${attempt}`,
          `delivery ${track.id} attempt ${attempt} was recorded${recorder ? ` by ${recorder.name}` : ''} and never announced`,
        );
      }
  }

  /**
   * A release, cancel or record of these leases failed: the engine no longer counts them (it claims them again once they
   * end), though the store still holds them leased until then, so they are not in its memory bound.
   */
  noteReleased(claims: readonly ClaimedDelivery[]): void {
    for (const claim of claims) {
      const track = this.tracks.get(claim.id);
      if (track) track.releasedAt = this.time.now;
    }
  }

  noteLeasesGivenUp(claims: readonly Pick<ClaimedDelivery, 'id' | 'lockToken'>[]): void {
    for (const claim of claims) this.leasesGivenUp.add(`${claim.lockToken}#${claim.id}`);
  }

  notePurged(eventIds: readonly string[]): void {
    for (const id of eventIds) {
      const event = this.events.get(id);
      if (event) event.purged = true;
    }
  }

  private trackOf(deliveryId: number): DeliveryTrack | undefined {
    this.observeStore();
    return this.tracks.get(deliveryId);
  }

  // ---- the invariants over the state -------------------------------------------------------------------------------

  private check(): void {
    if (this.failure) throw this.failure;
    this.checked = { activity: this.activity, at: this.time.now };
    this.observeStore();
    const now = this.time.now;
    const byEvent = new Map<string, number[]>();
    const pending = new Map<string, number[]>();
    const deliverers = this.instances.filter((instance) => instance.alive && instance.role !== 'api');
    const held = new Map<Instance, number>();
    /** Leases held per instance and user: a user holding their share of an instance is left out of its claims. */
    const heldOfUser = new Map<string, number>();
    const promptMs = 5 * SECOND + 2 * this.maxSkewMs;
    for (const row of this.store.deliveries.values()) {
      const owner = row.lockedBy === null ? undefined : this.tokenOwner.get(row.lockedBy);
      if (owner?.alive && row.status === DeliveryStatus.PENDING && row.lockedUntil! >= now) {
        if (!this.leasesGivenUp.has(`${row.lockedBy}#${row.id}`)) held.set(owner, (held.get(owner) ?? 0) + 1);
        heldOfUser.set(`${owner.name} ${row.userId}`, (heldOfUser.get(`${owner.name} ${row.userId}`) ?? 0) + 1);
      }
    }
    // An instance waiting on a stalled database call (over a second: an outage it waits out) or paused cannot claim
    // promptly: it does not count, nor does any while the database is down (or was, within the bound); nor one that
    // started less than the bound ago (what waited while no instance had room is
    // measured from its start). Room is what the engine counts (InstanceCapacity): its capacity is the memory bound
    // capped by what its slots start within a lease at the recent attempt duration (slow or timing-out endpoints make it
    // smaller), and it claims only when a batch (or half that capacity) fits (`fitsBatch`).
    const hasRoom = (instance: Instance) => {
      const capacity = engineCapacityOf(instance).capacity();
      return (
        instance.stalledUntil < now - promptMs &&
        !this.database.downDuring(now - promptMs, now) &&
        instance.startedAt < now - promptMs &&
        capacity - (held.get(instance) ?? 0) >= Math.min(instance.settings.batchSize, capacity / 2)
      );
    };
    // Room for a user's delivery: a claim leaves out the users that hold their share of the instance already
    // (perEndpointConcurrency × HELD_PER_ENDPOINT_SLOT): they are claimed for again as their attempts end.
    const hasRoomFor = (instance: Instance, userId: number) =>
      hasRoom(instance) &&
      (heldOfUser.get(`${instance.name} ${userId}`) ?? 0) < instance.settings.perEndpointConcurrency * HELD_PER_ENDPOINT_SLOT;
    // Only the owner of the row's partition claims it (while the partitions table says its lease runs), and every
    // delivering instance sharing the partitions polls every second. What waited while no instance held the partition
    // (its owner died, paused, or lost the database) is measured from when one holds it again.
    const owners = this.partitionOwners(now);
    const looksFor = (instance: Instance, row: DeliveryRow) => owners.get(partitionOf(row.userId)) === instance.name;
    const roomFor = (row: DeliveryRow) => deliverers.some((instance) => looksFor(instance, row) && hasRoomFor(instance, row.userId));
    // Claims take due rows in order (next attempt time, then id), each instance those of users it has room for: a row
    // waits its turn while an instance that looks for it and has room for it took rows within the bound (its drain makes
    // progress) and a due row comes before it in that instance's line; a minute at most, as long as an `all` process may
    // take to learn of a row. Its wait counts from when that stops (seed 13174: an instance claiming two at a time
    // through 71 deliveries it had just recovered, slow attempts between, reached the last ones after 7 s).
    // An ordered stream's delivery waits its turn behind the first PENDING one before it: no claim may take it.
    const firstPending = new Map<number, number>();
    for (const row of this.store.deliveries.values()) {
      if (row.streamId === null) continue;
      if (row.status === DeliveryStatus.PENDING) firstPending.set(row.streamId, Math.min(firstPending.get(row.streamId) ?? row.id, row.id));
      else if (!this.finalSeen.has(row.id)) {
        this.finalSeen.add(row.id);
        this.streamFinalAt.set(row.streamId, now);
      }
    }
    const waitsInStream = (row: DeliveryRow) =>
      this.isOrderedStream(row.streamId) && (firstPending.get(row.streamId!) ?? Number.POSITIVE_INFINITY) < row.id;
    const dueInClaimOrder = [...this.store.deliveries.values()].filter((row) => isDue(row, now) && !waitsInStream(row)).sort(claimOrder);
    const firstInLine = new Map(
      deliverers.map(
        (instance) => [instance, dueInClaimOrder.find((row) => looksFor(instance, row) && hasRoomFor(instance, row.userId))] as const,
      ),
    );
    const waitsItsTurn = (row: DeliveryRow, track: DeliveryTrack) => {
      const waiting = deliverers.some((instance) => {
        const first = firstInLine.get(instance);
        return (
          first !== undefined &&
          claimOrder(first, row) < 0 &&
          instance.tookAt > now - promptMs &&
          looksFor(instance, row) &&
          hasRoomFor(instance, row.userId)
        );
      });
      if (!waiting) track.waitingTurnSince = undefined;
      else track.waitingTurnSince ??= now;
      return waiting && now - track.waitingTurnSince! <= MINUTE;
    };
    for (const row of this.store.deliveries.values()) {
      const ofEvent = byEvent.get(row.eventId);
      if (ofEvent) ofEvent.push(row.id);
      else byEvent.set(row.eventId, [row.id]);
      if (row.status !== DeliveryStatus.PENDING) {
        this.pendingSeen.delete(row.id);
        continue;
      }
      this.pendingSeen.add(row.id);
      const pendingOfEvent = pending.get(row.eventId);
      if (pendingOfEvent) pendingOfEvent.push(row.id);
      else pending.set(row.eventId, [row.id]);
      const track = this.tracks.get(row.id)!;
      // In an ordered stream, its schedule starts when the one before it became final (guarantee 4), if that is later.
      const inTurnSince = this.isOrderedStream(row.streamId) ? (this.streamFinalAt.get(row.streamId!) ?? 0) : 0;
      const deadline = Math.max(track.deadline, inTurnSince + SCHEDULE_MS + SCHEDULE_SLACK_MS);
      if (!waitsInStream(row) && now > deadline + (this.haltedMs - track.haltedAtCreation))
        this.violate(
          'final-within-schedule',
          `late ${row.id}`,
          `delivery ${row.id} (${row.eventId}) still PENDING after ${formatMs(now - (track.deadline - SCHEDULE_MS - SCHEDULE_SLACK_MS))}: ` +
            `${row.attemptCount} attempts, next at ${row.nextAttemptAt === null ? '-' : this.at(row.nextAttemptAt)}${row.waitingReason ? ` (${row.waitingReason})` : ''}` +
            `${track.parked ? '; parked by an open circuit before' : ''}`,
        );
      if (row.lastError?.startsWith(SKIPPED_FOR_OPEN_CIRCUIT)) track.parked = true;
      const free = row.lockedUntil === null || row.lockedUntil < now;
      const leaseEnded = row.lockedUntil !== null && now > Math.max(row.lockedUntil, track.visibleAt);
      const parkedEnded = row.waitingReason !== null && row.nextAttemptAt !== null && now >= Math.max(row.nextAttemptAt, track.visibleAt);
      // A released lease makes the row claimable only then: a claim made before it could not have taken it.
      const since = Math.max(leaseEnded ? row.lockedUntil! : (row.nextAttemptAt ?? now), track.visibleAt, track.releasedAt ?? 0);
      // Measured from when an instance that looks for it had room for it: what waited for room (a user's share, attempts
      // or records to end) is claimed when the room frees, after one claim's round trip, never at that very instant.
      const claimable = free && (leaseEnded || parkedEnded) && !waitsInStream(row);
      if (!claimable) track.waitingTurnSince = undefined;
      if (claimable && !waitsItsTurn(row, track) && roomFor(row)) track.roomSince ??= now;
      else track.roomSince = null;
      const expired = leaseEnded && track.roomSince !== null && now - Math.max(since, track.roomSince) > promptMs;
      const parkedDue = !leaseEnded && parkedEnded && track.roomSince !== null && now - Math.max(since, track.roomSince) > promptMs;
      if (expired || parkedDue)
        this.violate(
          'prompt-pickup',
          `prompt ${row.id}@${row.lockedUntil ?? row.nextAttemptAt}`,
          `delivery ${row.id} (${row.eventId}) ${expired ? `lease ended at ${this.at(row.lockedUntil!)}` : `parked until ${this.at(row.nextAttemptAt!)}`} and nobody claimed it since (${formatMs(now - (expired ? row.lockedUntil! : row.nextAttemptAt!))}, with room for ${formatMs(now - track.roomSince!)}); ` +
            `${track.origin}${track.by ? ` by ${track.by.name}` : ''}${row.lockedBy ? `, lease of ${this.tokenOwner.get(row.lockedBy)?.name ?? '?'}` : ''}; room in ` +
            deliverers
              .filter((instance) => looksFor(instance, row) && hasRoomFor(instance, row.userId))
              .map(
                (instance) =>
                  `${instance.name} (${instance.role}, holds ${held.get(instance) ?? 0} of ${engineCapacityOf(instance).capacity()}, of user ${row.userId} ${heldOfUser.get(`${instance.name} ${row.userId}`) ?? 0})`,
              )
              .join(', '),
        );
    }
    for (const [eventId, ids] of pending)
      if (ids.length > 1)
        this.violate(
          'one-pending-delivery',
          `pending ${ids.join(',')}`,
          `event ${eventId} has ${ids.length} PENDING deliveries: ${ids.join(', ')}`,
        );
    for (const id of this.pendingSeen) {
      if (this.store.deliveries.has(id)) continue;
      this.pendingSeen.delete(id);
      this.violate('no-lost-event', `gone ${id}`, `delivery ${id} (${this.tracks.get(id)?.eventId}) vanished while PENDING`);
    }
    for (const event of this.events.values()) {
      if (!event.acked || event.purged) continue;
      if (!this.store.events.has(event.id))
        this.violate('no-lost-event', `lost ${event.id}`, `acknowledged event ${event.id} is gone from the outbox without a purge`);
      else if (!byEvent.has(event.id)) this.violate('no-lost-event', `lost ${event.id}`, `acknowledged event ${event.id} has no delivery`);
    }
    for (const [instance, count] of held) {
      const capacity = instance.settings.concurrency * HELD_PER_SLOT;
      if (count > capacity)
        this.violate(
          'bounded-memory',
          `memory ${instance.name}@${count}`,
          `${instance.name} holds ${count} leased deliveries (capacity ${capacity})`,
        );
    }
    this.checkStandDown(deliverers, now);
    if (this.failure) throw this.failure;
  }

  /**
   * An instance that reaches no receiver while another does owns no partition once the signs have lasted
   * STAND_DOWN_GRACE_MS: the others deliver its users. Its rounds may not run while it is paused or the database is down.
   */
  private checkStandDown(deliverers: readonly Instance[], now: number): void {
    const since = now - STAND_DOWN_GRACE_MS - EGRESS_WINDOW_MS;
    if (this.database.downDuring(since, now)) return;
    const owners = [...this.partitionOwners(now).values()];
    for (const instance of deliverers) {
      if (!this.egress.isDown(instance, now) || instance.startedAt > since) continue;
      if (instance.pauses.some((pause) => pause.until >= since)) continue;
      if (
        !this.egress.standDownDue(
          instance,
          deliverers.filter((other) => other !== instance),
          now,
        )
      )
        continue;
      const owned = owners.filter((holder) => holder === instance.name).length;
      if (owned > 0)
        this.violate(
          'egress-stand-down',
          `egress ${instance.name}`,
          `${instance.name} still owns ${owned} partitions: its network has been down since ${this.at(this.egress.downSince(instance, now)!)}, no receiver answered it for over ${formatMs(EGRESS_WINDOW_MS)} while another instance's did`,
        );
    }
  }

  violate(name: InvariantName, key: string, detail: string): void {
    if (!this.enabled.has(name)) return;
    const message = `${name} (${INVARIANTS[name]}): ${detail}`;
    if (this.tolerates(name, detail)) {
      if (this.toleratedKeys.has(`${name} ${key}`)) return;
      this.toleratedKeys.add(`${name} ${key}`);
      const seen = this.toleratedSeen.get(name);
      if (seen) seen.count++;
      else this.toleratedSeen.set(name, { invariant: name, step: this.step, message, count: 1 });
      this.trace(`  KNOWN VIOLATION ${message}`);
      return;
    }
    this.trace(`  VIOLATION ${message}`);
    if (this.failure) return;
    const recent = this.lines.filter((line) => line.step > this.step - TRACE_STEPS).map((line) => `  #${line.step} ${line.text}`);
    const replay =
      this.options.replay?.(this.options.seed) ?? `npm run test:simulation -- --seed=${this.options.seed} --steps=${this.options.steps}`;
    this.failure = new SimulationFailure(
      name,
      this.options.seed,
      this.step,
      `Invariant violated: seed ${this.options.seed}, step ${this.step}, ${this.at(this.time.now)}\n${message}\n` +
        `Last ${TRACE_STEPS} steps:\n${recent.join('\n')}\nReplay it step by step: ${replay}`,
    );
  }

  trace(text: string): void {
    const line = { step: this.step, text: `${this.at(this.time.now)} ${text}` };
    this.lines.push(line);
    if (this.lines.length > 4_000) this.lines.splice(0, 2_000);
    this.options.verbose?.(`#${line.step} ${line.text}`);
  }

  private at(time: number): string {
    return `t+${formatMs(time - START)}`;
  }
}
