import { randomUUID } from 'node:crypto';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock, type ClockTimer } from '../../clock/clock';
import { PreferencesService } from '../../preferences/preferences.service';
import { DeliveryEvents } from '../events/delivery-events.service';
import { DELIVERY_SETTINGS, type DeliverySettings, LEASE_MARGIN_MS } from '../delivery-settings';
import { WebhookSender } from '../http/webhook-sender';
import { OwnerWakeUps } from '../partitions/owner-wake-ups';
import { PartitionOwnership } from '../partitions/partition-ownership';
import { partitionOf } from '../partitions/partitions';
import { DeliveryTracing } from '../trace-context/delivery-tracing';
import type { WebhookEvent } from '../entities/webhook-event.entity';
import { AfterCommit } from './after-commit.subscriber';
import { AttemptRunner, type Job, type Targets } from './attempt-runner';
import { EngineWork } from './engine-work';
import { type EndpointKey, EndpointQueues } from './endpoint-queues';
import { HELD_PER_ENDPOINT_SLOT, HELD_PER_SLOT, InstanceCapacity, type LeaseStep } from './instance-capacity';
import { type Lease, type NewEvent, OutboxStore, type Placement, type RecoveryWindow } from './outbox-store';
import { RECOVER_LIMIT, RecoveryPacer } from './recovery-pacer';
import { WakeUps } from './wake-ups';

export type { Targets } from './attempt-runner';
export { RECOVER_LIMIT, RECOVER_PER_SECOND } from './recovery-pacer';

/**
 * The outbox engine: the only owner of the delivery tables, their leases and the scheduling policy. Callers
 * enqueue events, redeliver, recover, drain what is due, purge and count; the engine decides when each attempt starts.
 *
 * Every attempt waits in its endpoint's queue (one user's URLs on one host) and starts when that endpoint has
 * fewer than its cap in flight and the instance has a free slot, endpoints served round-robin; its deadline
 * starts with the request, never while it waits. An endpoint that stops answering opens its circuit: an attempt that
 * comes due while it is open is skipped (recorded as `circuit_open`, no request) and counts, until a probe gets an answer. What this instance cannot
 * hold stays due in the outbox and is claimed as soon as capacity frees, a bounded share per user per claim.
 *
 * This class is the facade; its parts, plain classes it owns: {@link InstanceCapacity} (room and placements),
 * {@link AttemptRunner} (admit, send, record), {@link WakeUps} (the drain and every reason to start one) and
 * {@link RecoveryPacer} (one recovery at a time, each user's paced behind live traffic), sharing {@link EngineWork}.
 */
@Injectable()
export class OutboxEngine implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly work: EngineWork;
  private readonly queues: EndpointQueues<Job>;
  private readonly capacity: InstanceCapacity;
  private readonly wakeUps: WakeUps;
  private readonly runner: AttemptRunner;
  private readonly recoveries = new RecoveryPacer();

  constructor(
    private readonly outbox: OutboxStore,
    preferences: PreferencesService,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    events: DeliveryEvents,
    @Inject(DELIVERY_SETTINGS) private readonly settings: DeliverySettings,
    private readonly afterCommit: AfterCommit,
    private readonly ownership: PartitionOwnership,
    @Optional() tracing: DeliveryTracing = new DeliveryTracing(),
    /** Wakes the owners of what this instance publishes for partitions it does not own; null: they poll for it. */
    @Optional() @Inject(OwnerWakeUps) private readonly ownerWakeUps: OwnerWakeUps | null = null,
  ) {
    this.work = new EngineWork(settings.role !== 'api');
    const { concurrency, perEndpointConcurrency, circuitBreaker } = settings;
    this.queues = new EndpointQueues<Job>(
      {
        concurrency,
        perEndpoint: perEndpointConcurrency,
        heldPerEndpoint: perEndpointConcurrency * HELD_PER_ENDPOINT_SLOT,
        held: concurrency * HELD_PER_SLOT,
        circuitBreaker,
      },
      (circuit) => ownership.keepCircuit(circuit),
    );
    this.capacity = new InstanceCapacity(this.queues, settings, this.work, clock);
    this.wakeUps = new WakeUps(outbox, clock, settings, this.queues, this.capacity, this.work, {
      lease: () => this.lease(),
      admit: (claims) => this.runner.admit(claims),
      owned: () => ownership.forClaim(),
    });
    this.runner = new AttemptRunner(
      outbox,
      preferences,
      sender,
      clock,
      events,
      settings,
      this.queues,
      this.capacity,
      this.wakeUps,
      this.work,
      ownership,
      tracing,
    );
  }

  /**
   * Commits new events with one delivery each (the caller has checked that each user has WEBHOOK enabled for the
   * type, with `targets`), then starts the first attempts of those this instance can hold at once; the rest wait
   * in the outbox, due now (an attempt due while its endpoint's circuit is open is recorded as skipped).
   */
  async enqueue(events: readonly NewEvent[], targets: Targets): Promise<void> {
    const now = this.clock.now();
    const reservation = new Map<EndpointKey, number>();
    const placements = this.capacity.placements(events, targets, now, reservation, (userId) => this.owns(userId, now));
    const lease = this.lease();
    try {
      const claims = await this.wakeUps.leasing(lease, () => this.outbox.enqueue(events, (event) => placements.get(event.id)!, lease));
      await this.runner.admit(claims, targets);
    } finally {
      this.capacity.unreserve(reservation);
    }
    // What waits due for a partition held here is claimed now; another's is its owner's to claim (woken below).
    if (events.some((event) => placements.get(event.id) === 'due' && this.ownership.mayClaim(event.userId, now)))
      void this.wakeUps.wake('backlog');
    void this.ownerWakeUps?.notify(this.othersPartitions(events, placements));
  }

  /**
   * Stores new events with one delivery each through the host's transaction (`manager`): they commit or roll back with
   * the host's rows. Nothing is attempted before the commit; after it, the first attempts start at once. Should this
   * process die in between, the leases expire and the deliveries are claimed like any due work.
   */
  async enqueueWithin(manager: EntityManager, events: readonly NewEvent[], targets: Targets): Promise<void> {
    const transaction = this.afterCommit.transactionOf(manager);
    const reservation = new Map<EndpointKey, number>();
    const now = this.clock.now();
    const placements = this.capacity.placements(events, targets, now, reservation, (userId) => this.owns(userId, now));
    const lease = this.lease();
    // The leased ones count against the room until the host's transaction ends (they are this instance's from its commit
    // on, whenever that comes): until admitCommitted takes them over, the rollback, or the lease's end.
    const unreserve = this.capacity.reserveUntil(reservation, lease.until);
    try {
      await this.outbox.enqueueWithin(manager, events, (event) => placements.get(event.id)!, lease);
    } catch (error) {
      unreserve();
      throw error;
    }
    const leased = [...placements.values()].includes('lease');
    const due = [...placements.values()].includes('due');
    const others = this.othersPartitions(events, placements);
    if (!leased && !(due && this.work.delivers) && others.size === 0) return;
    this.afterCommit.defer(
      transaction,
      () => {
        void this.ownerWakeUps?.notify(others);
        if (leased || (due && this.work.delivers)) void this.work.track(this.admitCommitted(lease, targets, due, unreserve));
        else unreserve();
      },
      unreserve,
    );
  }

  /**
   * Starts a new attempt cycle of a stored event (same id and bytes): the new delivery's id, the running one's when the
   * event has a PENDING delivery already (one cycle at a time), or null when the event is gone.
   */
  async redeliver(
    event: Pick<WebhookEvent, 'id' | 'userId' | 'type'>,
  ): Promise<{ readonly started: number } | { readonly running: number } | null> {
    // Leased here only when this instance has room for it (else it waits in the outbox, due now, for the next claim of
    // any instance): the lease being taken counts against the room while the insert runs, so that a claim or an enqueue
    // meanwhile does not fill it, and a redelivery never leases beyond the capacity.
    const holding = this.work.delivers && this.capacity.room() > 0 && this.owns(event.userId, this.clock.now()) ? 1 : 0;
    let claim: Awaited<ReturnType<OutboxStore['enqueueAgain']>>;
    this.capacity.enter('claim', holding);
    const lease = this.lease();
    try {
      claim = await this.wakeUps.leasing(lease, () => this.outbox.enqueueAgain(event, holding > 0 ? 'lease' : 'due', lease));
    } finally {
      this.capacity.leave('claim', holding); // admit or release takes it in this turn
    }
    if (claim === null || 'running' in claim) return claim;
    if ('queued' in claim) {
      void this.wakeUps.wake('backlog');
      if (!this.owns(event.userId, this.clock.now())) void this.ownerWakeUps?.notify(new Set([partitionOf(event.userId)]));
      return { started: claim.queued };
    }
    if (this.work.delivers && this.capacity.room() > 0) await this.runner.admit([claim]);
    // No room left here (the capacity shrank meanwhile): it waits in the outbox, due now, for the next claim.
    else if (this.work.delivers) await this.runner.release([claim]);
    return { started: claim.id };
  }

  /**
   * A new cycle for the user's deliveries that ended FAILED in the window (same event ids and bytes, as redeliver),
   * at most {@link RECOVER_LIMIT} per call. Lower priority than live traffic: a user's recoveries in this process become due
   * `RECOVER_PER_SECOND` a second in all, at most half of it one user's ({@link RecoveryPacer}), and claims give them no more than a user's
   * share, while new events are leased at once. This process looks for due work every second until the last of them is due.
   */
  async recover(window: RecoveryWindow): Promise<{ queued: number; more: boolean }> {
    let queued: number;
    try {
      queued = await this.recoveries.run(
        window.userId,
        () => this.lease(),
        (placeOf, lease) => this.outbox.recoverFailed(window, RECOVER_LIMIT, placeOf, lease),
      );
    } catch (error) {
      // It may have committed before its answer was lost: what it queued is looked for as it comes due, all the same.
      if (this.work.delivers) this.wakeUps.pollUntil(this.recoveries.lastDueAt);
      throw error;
    }
    if (queued > 0 && this.work.delivers) this.wakeUps.pollUntil(this.recoveries.lastDueAt);
    return { queued, more: queued === RECOVER_LIMIT };
  }

  /**
   * Claims what is due, as much as this instance can hold, and starts it; resolves with how many were claimed. Keeps
   * claiming while due work remains and there is room; what does not fit is claimed as soon as capacity frees. A call
   * during a drain joins it. The scheduler's run every minute. A claim first renews (or takes back) the partitions
   * whose leases no longer outlast an attempt: after a pause, or a clock that jumped, not a renewal interval later.
   */
  drain(): Promise<number> {
    return this.wakeUps.drain();
  }

  /**
   * After a scheduler run, in an `all` process (a `worker` polls every second anyway): arms a timer for when the earliest
   * lease still running ends, so the deliveries of an instance that died or paused are retaken within seconds of their
   * lease's end, not at the next minute tick. When it fires it drains what is due and looks again.
   */
  watchLeases(): Promise<void> {
    return this.wakeUps.watchLeases();
  }

  /** Another instance left deliveries of this instance's partitions due (its wake-up, see OwnerWakeUps): claimed now, or with the next few ms' wake-ups under load. */
  wokenUp(): void {
    this.wakeUps.woken();
  }

  /**
   * The testing kit: in an `all` process sharing partitions, stops the poll every second for what other instances
   * published, so that a test's scheduler runs are the only claims (a `worker` keeps its poll: it has no other way to
   * find work).
   */
  stopPolling(): void {
    if (this.settings.role === 'all') this.wakeUps.stopPolling();
  }

  /** Resolves when nothing is in flight, queued or waiting to be recorded. */
  async idle(): Promise<void> {
    for (;;) {
      await this.work.settled();
      await this.runner.recordsIdle();
      if (this.work.running === 0 && this.queues.held > 0) this.runner.pump();
      if (this.work.running === 0) return;
    }
  }

  /** Endpoints whose circuit is open (or probing) in this instance. */
  openCircuits(): number {
    return this.queues.openCircuits(this.clock.now());
  }

  /** The leases this instance holds (or the room it reserved for those being taken), by the step they are in. */
  leasesByStep(): Record<LeaseStep, number> {
    return this.capacity.leasesByStep();
  }

  /** Partitions of users this instance delivers for now. */
  partitionsOwned(): number {
    return this.ownership.count;
  }

  /** The partitions of the deliveries left due for users this instance does not deliver for: another instance's to start. */
  private othersPartitions(events: readonly NewEvent[], placements: ReadonlyMap<string, Placement>): Set<number> {
    const partitions = new Set<number>();
    if (this.ownerWakeUps === null) return partitions;
    const now = this.clock.now();
    for (const event of events)
      if (placements.get(event.id) === 'due' && !this.owns(event.userId, now)) partitions.add(partitionOf(event.userId));
    return partitions;
  }

  /** Whether a delivery of `userId` leased here at `now` could start an attempt at once: its partition is this instance's. */
  private owns(userId: number, now: number): boolean {
    return this.work.delivers && this.ownership.covers(userId, now + this.settings.timeoutMs + LEASE_MARGIN_MS);
  }

  /** A lease starting now. While shutting down (and always in an `api` process), it ends at once: new deliveries stay free for other instances. */
  lease(): Lease {
    const now = this.clock.now();
    return { token: randomUUID(), now, until: this.work.stopping || !this.work.delivers ? now : now + this.settings.leaseMs };
  }

  /**
   * A `worker` polls every second from now on. An `all` process looks once for due work at start, then watches the
   * leases running: what a crashed predecessor left (its leases ended meanwhile) is taken over within seconds, not at
   * the first minute tick.
   */
  async onApplicationBootstrap(): Promise<void> {
    if (!this.work.delivers) return;
    // The first round of partition leases and the first look for due work end before the app is up: what a test (or a
    // host) does next does not race them.
    await this.ownership.start({
      inFlight: (partition) => this.runner.inFlight(partition),
      lost: (partitions) => this.handOver(partitions),
      gained: () => void this.wakeUps.wake('backlog'),
      inherited: (circuits, partitions) => {
        const reopening = this.queues.inherit(circuits, partitions, this.clock.now());
        if (reopening !== null) this.wakeUps.probeAt(reopening);
      },
    });
    // Sharing the partitions with other instances, an `all` process polls like a worker: what the others publish for the
    // users it owns is due in the outbox, for it to claim.
    if (this.settings.role === 'worker' || this.ownership.leased) this.wakeUps.pollUntil(Number.POSITIVE_INFINITY);
    if (this.settings.role !== 'all') return;
    // Joins the drain the first take started, if any: its claims are over when the app is up (their attempts are not).
    await this.wakeUps.drain().catch(() => undefined); // logged, and retried, by WakeUps
    void this.work.track(this.wakeUps.watchLeases());
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.work.stopping = true;
    this.wakeUps.stop();
    const unstarted = this.queues.takeQueued();
    this.ownership.depart(); // each partition goes to the others as its attempts here end
    const inFlight = this.queues.inFlight;
    this.logger.log(`Shutdown: draining ${inFlight} attempt(s) in flight (waiting at most ${this.settings.shutdownGraceMs} ms)`);
    this.capacity.enter('release', unstarted.length);
    try {
      await this.outbox.release(unstarted.map((job) => job.claim));
      if (unstarted.length > 0) this.logger.log(`Shutdown: released ${unstarted.length} deliveries for other instances`);
    } catch (error) {
      // They stay leased here until their leases end, then any instance claims them: the shutdown goes on.
      this.logger.warn(
        `Shutdown: ${unstarted.length} deliveries not released (${(error as Error).message}); claimed again when their leases end`,
      );
    } finally {
      this.capacity.leave('release', unstarted.length);
    }
    const started = performance.now();
    // The grace runs on the module's clock, as every other timer of the engine does (the simulation replays a seed exactly).
    let grace!: ClockTimer;
    const graceOver = new Promise<false>((resolve) => {
      grace = this.clock.setTimeout(() => resolve(false), this.settings.shutdownGraceMs);
    });
    const finished = await Promise.race([this.idle().then(() => true), graceOver]);
    grace.cancel();
    if (finished)
      this.logger.log(`Shutdown: drained; ${inFlight} attempt(s) finished and recorded in ${Math.round(performance.now() - started)} ms`);
    else this.logger.warn(`Shutdown: attempts still running after ${this.settings.shutdownGraceMs} ms; their leases will expire`);
    // Its partitions go to the other instances at once, unless attempts still run here: then when their leases end.
    await this.ownership.stop(finished).catch((error: Error) => this.logger.warn(`Shutdown: partitions not given back (${error.message})`));
  }

  /** Partitions that are no longer this instance's: their queued attempts go back to the outbox, for the new owner. */
  private handOver(partitions: ReadonlySet<number>): void {
    // Standing down, no receiver answers this instance: what failed since its last answer may be its own network.
    const failedAlone = this.ownership.isStandingDown ? (this.ownership.egress.answeredAt ?? Number.NEGATIVE_INFINITY) : null;
    const jobs = this.queues.handOver((userId) => partitions.has(partitionOf(userId)), failedAlone);
    if (jobs.length > 0) void this.work.track(this.runner.release(jobs.map((job) => job.claim)));
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all([this.sender.close(), this.ownerWakeUps?.close()]);
  }

  /**
   * After the host's commit: admits what this process leased, as far as it has room now (the room was counted when the
   * host published, and other work may have filled it meanwhile); the rest goes back to the outbox, due, and is claimed.
   * The host may have committed after the lease ended, or so late that no attempt fits in what is left of it: then all
   * go back, to be claimed with a fresh lease. Whatever becomes of them here (this read or the release fails or hangs
   * in a database outage), a timer claims them when the lease ends: other instances did not see this lease at their
   * last scheduler run (it was not committed yet), so nobody else watches it.
   */
  private async admitCommitted(lease: Lease, targets: Targets, due: boolean, unreserve: () => void): Promise<void> {
    this.wakeUps.leaseGivenUp(lease.until);
    // Should the read fail, the rows stay leased here until the lease ends, and their reservation with them (seed 146337:
    // freed at once, the next publishes leased past the capacity).
    const leased = await this.outbox.leasedWith(lease);
    unreserve(); // admit and release count what they take in this turn
    const attemptFits = this.clock.now() + this.settings.timeoutMs + LEASE_MARGIN_MS < lease.until;
    const room = attemptFits ? this.capacity.room() : 0;
    const admitted = this.runner.admit(leased.slice(0, room), targets);
    await Promise.all([admitted, this.runner.release(leased.slice(room))]);
    if (due) void this.wakeUps.wake('backlog');
  }
}
