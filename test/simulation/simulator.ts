import { Logger, type LoggerService } from '@nestjs/common';
import { WEBHOOK_EVENT_TYPES } from '../../src/notifications/catalog/event-catalog';
import { MAX_CLOCK_SKEW_MS, type DeliverySettings } from '../../src/notifications/delivery/delivery-settings';
import type { ProcessRole } from '../../src/notifications/process-role';
import { CircuitOpenings } from './circuit-openings';
import { DatabaseFaults } from './database-faults';
import { EgressFaults } from './egress-faults';
import { InMemoryOutboxStore } from './in-memory-outbox-store';
import { InMemoryPartitionLeases } from './in-memory-partition-leases';
import { INVARIANTS, INVARIANT_NAMES, type InvariantName } from './invariants';
import { type Mutation, MUTATIONS, type MutationName } from './mutations';
import { Prng } from './prng';
import { startInstance } from './instances';
import { Receivers } from './receivers';
import { countImmediates, quiesce, settle } from './rest';
import { SendChecks, type SendCheckWorld } from './send-checks';
import { ClockSkews, SimTime } from './sim-time';
import { type InvariantWorld, StateInvariants } from './state-invariants';
import { RandomSteps, type StepWorld } from './steps';
import { type ObserverWorld, StoreObserver } from './store-observer';
import { UserWebhooks } from './webhooks';
import {
  atTime,
  type DuplicateCause,
  type HostTransaction,
  type Instance,
  LEASE_MS,
  SECOND,
  type SimEvent,
  START,
  TIMEOUT_MS,
  TRACE_STEPS,
} from './world-model';

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
  const restoreSetImmediate = countImmediates();
  logSink = (line) => world.trace(line);
  const unhandled = (reason: unknown) => world.violate('no-unhandled-rejection', 'unhandled', `unhandled rejection: ${String(reason)}`);
  process.on('unhandledRejection', unhandled);
  try {
    return await world.run();
  } finally {
    process.off('unhandledRejection', unhandled);
    restoreSetImmediate();
    Logger.overrideLogger(previousLogger ?? false);
    logSink = null;
  }
}

/**
 * The world of one run: its state, drawn from the seed, its run loop, the trace and the verdicts. Its jobs are rooms of
 * their own, each told what it needs of the world by an interface of its own (which this class implements):
 * steps.ts (the random steps), rest.ts (time running, coming to rest, the quiet phase), instances.ts and
 * process-faults.ts (starting, pausing, stopping and crashing instances), sender.ts and receivers.ts (requests and
 * their answers), send-checks.ts (the invariants checked as a request leaves), store-observer.ts (what the stores and
 * engines report, and the checks made on a report), state-invariants.ts (the invariants over the tables, at rest),
 * webhooks.ts (the users' preferences).
 */
class World implements StepWorld, SendCheckWorld, ObserverWorld, InvariantWorld {
  readonly time = new SimTime(START);
  readonly partitions = new InMemoryPartitionLeases();
  readonly store = new InMemoryOutboxStore(this.partitions);
  readonly random: Prng;
  private readonly enabled: ReadonlySet<InvariantName>;
  private readonly tolerates: (invariant: InvariantName, detail: string) => boolean;
  readonly mutation: Mutation | undefined;
  private readonly toleratedSeen = new Map<InvariantName, ToleratedViolation>();
  private readonly toleratedKeys = new Set<string>();
  private readonly lines: { step: number; text: string }[] = [];
  step = 0;
  /** Writes and requests so far: the invariants over the tables are checked again when it moved (or 15 s passed). */
  activity = 0;
  /** Who took each lease (tokens are random: they never decide anything, only name the holder). */
  readonly tokenOwner = new Map<string, Instance>();
  /** The first violation not tolerated: thrown once the engines are at rest (never into the engine's own calls). */
  failure: Error | null = null;

  readonly instances: Instance[] = [];
  generation = 0;
  readonly settings: DeliverySettings;
  readonly roles: ProcessRole[];
  /** The instances' clock offsets: how far apart this run allows them, and how far apart they have been. */
  readonly skews: ClockSkews;
  readonly database: DatabaseFaults;
  /** Instances whose own network is down (they reach the database, not the receivers). */
  readonly egress: EgressFaults;
  readonly faults: { prefsFail: number; pause: number; pauseAtSend: number };

  readonly users: number[];
  readonly webhooks = new UserWebhooks(this.store);
  readonly receivers: Receivers;

  readonly events = new Map<string, SimEvent>();
  readonly transactions: HostTransaction[] = [];
  /**
   * Time no instance could deliver: none alive in a delivering role, or every one held up by a database outage. The
   * schedule's deadlines move by it.
   */
  haltedMs = 0;
  requests = 0;
  /** Circuits opened, kept for the next owner, closed by an answer: what `circuit-inherited` checks. */
  readonly circuits = new CircuitOpenings();

  readonly observer = new StoreObserver(this);
  readonly sendChecks = new SendChecks(this);
  readonly invariants = new StateInvariants(this);
  private readonly randomSteps = new RandomSteps(this);

  constructor(private readonly options: SimOptions) {
    this.random = new Prng(options.seed);
    this.egress = new EgressFaults(options.seed);
    this.mutation = options.mutation && MUTATIONS[options.mutation];
    this.mutation?.store?.(this.store);
    this.enabled = options.invariants ?? new Set(INVARIANT_NAMES);
    this.tolerates = options.tolerates ?? (() => false);
    const r = this.random;
    this.receivers = new Receivers(r);
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
    this.skews = new ClockSkews(r, r.pick([0, 0, 2 * SECOND, MAX_CLOCK_SKEW_MS]));
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
    for (const userId of this.users) if (ordering.chance(0.5)) this.webhooks.orderedUsers.add(userId);
    const types = WEBHOOK_EVENT_TYPES.slice(0, 3);
    for (const userId of this.users) {
      for (const host of ['a', 'b'])
        this.receivers.modes.set(`u${userId}-${host}.example`, r.chance(0.8) ? 'up' : this.receivers.randomMode());
      for (const type of types) this.webhooks.add(userId, type, `u${userId}-${r.pick(['a', 'b'])}.example`, r.chance(0.9));
    }
  }

  async run(): Promise<SimResult> {
    const s = this.settings;
    this.trace(
      `seed ${this.options.seed}: ${this.roles.length} instances (${this.roles.join(', ')}), concurrency ${s.concurrency}, ` +
        `per endpoint ${s.perEndpointConcurrency}, batch ${s.batchSize}, circuit after ${s.circuitBreaker.failuresToOpen}, ` +
        `skew up to ${this.skews.maxMs} ms, database ${JSON.stringify(this.database.rates)}, faults ${JSON.stringify(this.faults)}, ` +
        `users ${this.users.length}`,
    );
    this.roles.forEach((role, slot) => startInstance(this, slot, role));
    await settle(this);
    for (this.step = 1; this.step <= this.options.steps; this.step++) {
      await this.randomSteps.take();
      this.randomSteps.maybeLoseNetwork();
      await settle(this);
      this.invariants.check();
    }
    await quiesce(this);
    this.observer.checkAllAnnounced();
    this.invariants.check();
    return {
      seed: this.options.seed,
      steps: this.step,
      simulatedMs: this.time.now - START,
      events: this.events.size,
      requests: this.requests,
      excusedDuplicates: this.sendChecks.excusedDuplicates,
      tolerated: this.toleratedSeen,
    };
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
      `Invariant violated: seed ${this.options.seed}, step ${this.step}, ${atTime(this.time.now)}\n${message}\n` +
        `Last ${TRACE_STEPS} steps:\n${recent.join('\n')}\nReplay it step by step: ${replay}`,
    );
  }

  trace(text: string): void {
    const line = { step: this.step, text: `${atTime(this.time.now)} ${text}` };
    this.lines.push(line);
    if (this.lines.length > 4_000) this.lines.splice(0, 2_000);
    this.options.verbose?.(`#${line.step} ${line.text}`);
  }
}
