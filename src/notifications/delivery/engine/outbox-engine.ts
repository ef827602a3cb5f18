import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { EventType } from '../../catalog/event-catalog';
import { Clock } from '../../clock/clock';
import { GroupCommit } from '../../common/group-commit';
import { PreferencesService, type WebhookTarget } from '../../preferences/preferences.service';
import { webhookKey } from '../../preferences/webhook-key';
import { DeliveryEvents } from '../delivery-events';
import { DELIVERY_SETTINGS, type DeliverySettings, LEASE_MARGIN_MS } from '../delivery-settings';
import type { AttemptResult } from '../http/attempt-result';
import { WebhookSender } from '../http/webhook-sender';
import type { DeliveryStatus } from '../webhook-delivery.entity';
import type { WebhookEvent } from '../webhook-event.entity';
import { buildWebhookRequest } from '../webhook-request';
import { AfterCommit } from './after-commit';
import { attemptRecord, refusedUnsigned } from './attempt-record';
import {
  type AttemptRecord,
  type ClaimedDelivery,
  DeliveryOutboxRepository,
  type Lease,
  type NewEvent,
  type Placement,
  type PurgedBatch,
  type QueueDepth,
  type RecoveryWindow,
} from './delivery-outbox.repository';
import { type CircuitOpened, type EndpointKey, EndpointQueues, endpointKeyOf, type QueuedAttempt } from './endpoint-queues';

export type Targets = ReadonlyMap<string, WebhookTarget>;

interface Job extends QueuedAttempt {
  readonly claim: ClaimedDelivery;
  readonly target: WebhookTarget;
}

/**
 * The outbox engine: the only owner of the delivery tables, their leases and the scheduling policy. Callers
 * enqueue events, redeliver, drain what is due, purge and count; the engine decides when each attempt starts.
 *
 * Every attempt waits in its endpoint's queue (one user's URLs on one host) and starts when that endpoint has
 * fewer than its cap in flight and the instance has a free slot, endpoints served round-robin; its deadline
 * starts with the request, never while it waits. An endpoint that stops answering opens its circuit: its
 * deliveries are parked in the outbox (not failed) until a probe gets an answer. What this instance cannot
 * hold stays due in the outbox and is claimed as soon as capacity frees, a bounded share per user per claim.
 */
@Injectable()
export class OutboxEngine implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly queues: EndpointQueues<Job>;
  private readonly records: GroupCommit<{ claim: ClaimedDelivery; record: AttemptRecord }, boolean>;
  private readonly tracked = new Set<Promise<unknown>>();
  private draining: Promise<number> | null = null;
  /** Due deliveries may be waiting in the outbox that this instance had no room for. */
  private backlog = false;
  /** Users the last claim left out because they held their share: when one of their attempts ends, claim again. */
  private leftOut = new Set<number>();
  /** Wakes the engine when the earliest open circuit lets a probe through, instead of waiting for the minute tick. */
  private probeTimer: { at: number; timer: NodeJS.Timeout } | null = null;
  /** Attempts made but not yet recorded: they still count against the memory bound, so records cannot fall behind unboundedly. */
  private unrecorded = 0;
  /** Moving average of attempt durations: how much this instance can start within a lease. Pessimistic at first. */
  private attemptMs: number;
  private stopping = false;
  /** False in an `api` process: it stores deliveries for the worker processes and never attempts or claims any. */
  private readonly delivers: boolean;
  /** In a `worker` process: looks for due deliveries every second, so what `api` processes publish starts at once. */
  private pollTimer: NodeJS.Timeout | null = null;
  private pollingUntil = 0;
  /** The recovery running in this process, if any (see {@link recover}), and the second its next recovered delivery falls in. */
  private recovering: Promise<void> = Promise.resolve();
  private recoverySlot = { at: 0, used: 0 };

  constructor(
    private readonly outbox: DeliveryOutboxRepository,
    private readonly preferences: PreferencesService,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly events: DeliveryEvents,
    @Inject(DELIVERY_SETTINGS) private readonly settings: DeliverySettings,
    private readonly afterCommit: AfterCommit,
  ) {
    this.delivers = settings.role !== 'api';
    const { concurrency, perEndpointConcurrency, circuitBreaker } = settings;
    this.queues = new EndpointQueues<Job>({
      concurrency,
      perEndpoint: perEndpointConcurrency,
      heldPerEndpoint: perEndpointConcurrency * HELD_PER_ENDPOINT_SLOT,
      held: concurrency * HELD_PER_SLOT,
      circuitBreaker,
    });
    this.attemptMs = settings.timeoutMs;
    this.records = new GroupCommit((attempts) => this.outbox.recordAttempts(attempts), { maxGroupSize: settings.batchSize });
  }

  /**
   * Commits new events with one delivery each (the caller has checked that each user has WEBHOOK enabled for the
   * type, with `targets`), then starts the first attempts of those this instance can hold at once; the rest wait
   * in the outbox, due now (or parked while their endpoint's circuit is open).
   */
  async enqueue(events: readonly NewEvent[], targets: Targets): Promise<void> {
    const now = this.clock.now();
    const placements = this.placements(events, targets, now);
    const claims = await this.outbox.enqueue(events, (event) => placements.get(event.id)!, this.lease());
    await this.admit(claims, targets);
    if ([...placements.values()].includes('due')) this.noteBacklog();
  }

  /**
   * Stores new events with one delivery each through the host's transaction (`manager`): they commit or roll back with
   * the host's rows. Nothing is attempted before the commit; after it, the first attempts start at once. Should this
   * process die in between, the leases expire and the deliveries are claimed like any due work.
   */
  async enqueueWithin(manager: EntityManager, events: readonly NewEvent[], targets: Targets): Promise<void> {
    const transaction = this.afterCommit.transactionOf(manager);
    const placements = this.placements(events, targets, this.clock.now());
    const lease = this.lease();
    await this.outbox.enqueueWithin(manager, events, (event) => placements.get(event.id)!, lease);
    const leased = [...placements.values()].includes('lease');
    const due = [...placements.values()].includes('due');
    if (!leased && !(due && this.delivers)) return;
    this.afterCommit.defer(transaction, () => {
      void this.track(this.admitCommitted(lease, targets, due));
    });
  }

  /** Starts a new attempt cycle of a stored event (same id and bytes); the new delivery's id, or null when the event is gone. */
  async redeliver(event: Pick<WebhookEvent, 'id' | 'userId' | 'type'>): Promise<number | null> {
    const [claim] = await this.outbox.enqueueAgain(event, 'lease', this.lease());
    if (!claim) return null;
    if (this.delivers) await this.admit([claim]);
    return claim.id;
  }

  /**
   * A new cycle for the user's deliveries that ended FAILED in the window (same event ids and bytes, as redeliver),
   * at most {@link RECOVER_LIMIT} per call. Lower priority than live traffic: the recoveries of this process become due
   * {@link RECOVER_PER_SECOND} a second, all together, and claims give them no more than a user's share, while new
   * events are leased at once. This process looks for due work every second until the last of them is due.
   */
  async recover(window: RecoveryWindow): Promise<{ queued: number; more: boolean }> {
    // One recovery at a time in this process: it holds one connection (live publishes keep the rest of the pool), a
    // second call of the same user sees the first one's deliveries and skips them, and all share one pace.
    const run = this.recovering.then(() => {
      const lease = this.lease();
      const slots: number[] = [];
      const placeOf = (index: number): Placement => {
        while (slots.length <= index) slots.push(this.nextRecoverySlot(lease.now));
        return { parkUntil: slots[index], reason: `recovery: queued behind live traffic, due at ${new Date(slots[index]).toISOString()}` };
      };
      return this.outbox.recoverFailed(window, RECOVER_LIMIT, placeOf, lease);
    });
    this.recovering = run.then(
      () => undefined,
      () => undefined,
    );
    const queued = await run;
    if (queued > 0 && this.delivers) this.pollUntil(this.recoverySlot.at);
    return { queued, more: queued === RECOVER_LIMIT };
  }

  /**
   * Claims what is due, as much as this instance can hold, and starts it; resolves with how many were claimed. Keeps
   * claiming while due work remains and there is room; what does not fit is claimed as soon as capacity frees. A call
   * during a drain joins it.
   */
  drain(): Promise<number> {
    if (!this.delivers) return Promise.resolve(0);
    this.draining ??= this.track(this.claimWhileRoom()).finally(() => {
      this.draining = null;
      this.drainIfBacklog();
    });
    return this.draining;
  }

  /** Resolves when nothing is in flight, queued or waiting to be recorded. */
  async idle(): Promise<void> {
    for (;;) {
      await Promise.allSettled([...this.tracked]);
      await this.records.idle();
      if (this.tracked.size === 0 && this.queues.held > 0) this.pump();
      if (this.tracked.size === 0) return;
    }
  }

  queueDepth(cap: number): Promise<QueueDepth> {
    return this.outbox.queueDepth(this.clock.now(), cap);
  }

  purge(status: DeliveryStatus, before: number, limit: number): Promise<PurgedBatch> {
    return this.outbox.purgeBatch(status, before, limit);
  }

  /** Endpoints whose circuit is open (or probing) in this instance. */
  openCircuits(): number {
    return this.queues.openCircuits();
  }

  /** A lease starting now. While shutting down (and always in an `api` process), it ends at once: new deliveries stay free for other instances. */
  lease(): Lease {
    const now = this.clock.now();
    return { token: randomUUID(), now, until: this.stopping || !this.delivers ? now : now + this.settings.leaseMs };
  }

  onApplicationBootstrap(): void {
    if (this.settings.role === 'worker') this.pollUntil(Number.POSITIVE_INFINITY);
  }

  /** Looks for due work every second until `until` (a worker: always). */
  private pollUntil(until: number): void {
    this.pollingUntil = Math.max(this.pollingUntil, until);
    if (this.pollTimer || this.stopping) return;
    this.pollTimer = setInterval(() => {
      if (this.clock.now() > this.pollingUntil + POLL_INTERVAL_MS && this.pollTimer) {
        clearInterval(this.pollTimer);
        this.pollTimer = null;
      }
      void this.track(this.drainIfDue());
    }, POLL_INTERVAL_MS);
    this.pollTimer.unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = null;
    if (this.probeTimer) clearTimeout(this.probeTimer.timer);
    const unstarted = this.queues.takeQueued();
    const inFlight = this.queues.inFlight;
    this.logger.log(`Shutdown: draining ${inFlight} attempt(s) in flight (waiting at most ${this.settings.shutdownGraceMs} ms)`);
    await this.outbox.release(unstarted.map((job) => job.claim));
    if (unstarted.length > 0) this.logger.log(`Shutdown: released ${unstarted.length} deliveries for other instances`);
    const started = performance.now();
    const finished = await Promise.race([this.idle().then(() => true), delay(this.settings.shutdownGraceMs, false, { ref: false })]);
    if (finished)
      this.logger.log(`Shutdown: drained; ${inFlight} attempt(s) finished and recorded in ${Math.round(performance.now() - started)} ms`);
    else this.logger.warn(`Shutdown: attempts still running after ${this.settings.shutdownGraceMs} ms; their leases will expire`);
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sender.close();
  }

  /** Where each new delivery starts: leased here when its endpoint and this instance have room, parked when its circuit is open. */
  private placements(events: readonly NewEvent[], targets: Targets, now: number): Map<string, Placement> {
    const placements = new Map<string, Placement>();
    const adding = new Map<EndpointKey, number>();
    let room = this.delivers ? this.room() : 0;
    for (const event of events) {
      const endpoint = endpointKeyOf(event.userId, targets.get(webhookKey(event.userId, event.type))!.url);
      const admission = this.queues.admission(endpoint, now, adding.get(endpoint) ?? 0);
      if (typeof admission === 'object') {
        placements.set(event.id, { parkUntil: admission.parkUntil, reason: admission.reason });
      } else if (admission === 'hold' && room > 0) {
        placements.set(event.id, 'lease');
        adding.set(endpoint, (adding.get(endpoint) ?? 0) + 1);
        room--;
      } else {
        placements.set(event.id, 'due');
      }
    }
    return placements;
  }

  /** When the next recovered delivery becomes due: {@link RECOVER_PER_SECOND} per second, from now on. */
  private nextRecoverySlot(now: number): number {
    if (this.recoverySlot.at < now) this.recoverySlot = { at: now, used: 0 };
    if (this.recoverySlot.used === RECOVER_PER_SECOND) this.recoverySlot = { at: this.recoverySlot.at + 1000, used: 0 };
    this.recoverySlot.used++;
    return this.recoverySlot.at;
  }

  /** After the host's commit: queues what this process leased, and claims what it had no room for. */
  private async admitCommitted(lease: Lease, targets: Targets, due: boolean): Promise<void> {
    await this.admit(await this.outbox.leasedWith(lease), targets);
    if (due) this.noteBacklog();
  }

  /** The worker's poll: one cheap look for due deliveries when idle enough to take a batch, a drain when there are some. */
  private async drainIfDue(): Promise<void> {
    if (this.stopping || this.draining !== null || this.room() < Math.min(this.settings.batchSize, this.capacity() / 2)) return;
    if (await this.outbox.anyDue(this.clock.now())) await this.drain();
  }

  private async claimWhileRoom(): Promise<number> {
    let claimed = 0;
    while (!this.stopping) {
      const room = Math.min(this.settings.batchSize, this.room());
      if (room === 0) {
        this.backlog = true;
        break;
      }
      const fairness = { perUser: this.settings.perEndpointConcurrency * HELD_PER_ENDPOINT_SLOT, heldByUser: this.queues.heldByUser() };
      const { claims, exhausted, excluded } = await this.outbox.claimDue(room, this.lease(), fairness);
      claimed += claims.length;
      await this.admit(claims);
      if (exhausted) {
        // A user left out for holding their share may have finished attempts while the claim ran: claim again for them.
        const held = this.queues.heldByUser();
        this.leftOut = new Set(excluded.filter((userId) => (held.get(userId) ?? 0) >= fairness.perUser));
        if (this.leftOut.size < excluded.length) this.backlog = true;
        break;
      }
    }
    return claimed;
  }

  /** Queues leased deliveries behind their endpoints, parks those whose circuit is open, cancels those whose webhook is off. */
  private async admit(claims: readonly ClaimedDelivery[], known?: Targets): Promise<void> {
    if (claims.length === 0) return;
    let targets: Targets;
    try {
      targets = known ?? (await this.preferences.webhookTargets(claims));
    } catch (error) {
      this.logger.error(
        `Webhook targets of ${claims.length} deliveries could not be read; released for a later run`,
        (error as Error).stack,
      );
      await this.outbox.release(claims);
      this.noteBacklog();
      return;
    }
    const now = this.clock.now();
    const parked = new Map<
      EndpointKey,
      { userId: number; types: Set<EventType>; until: number; reason: string; claims: ClaimedDelivery[] }
    >();
    for (const claim of claims) {
      const target = targets.get(webhookKey(claim.userId, claim.type));
      if (!target) {
        void this.track(this.cancel(claim));
        continue;
      }
      const endpoint = endpointKeyOf(claim.userId, target.url);
      const admission = this.queues.admission(endpoint, now, 0);
      if (typeof admission === 'object') {
        const group = parked.get(endpoint) ?? {
          userId: claim.userId,
          types: new Set(),
          until: admission.parkUntil,
          reason: admission.reason,
          claims: [],
        };
        group.types.add(claim.type);
        group.claims.push(claim);
        parked.set(endpoint, group);
      } else {
        this.queues.push({ endpoint, userId: claim.userId, type: claim.type, claim, target });
      }
    }
    for (const group of parked.values()) void this.track(this.park(group.claims, { ...group, types: [...group.types] }));
    this.pump();
  }

  /** Starts queued attempts while this instance has free slots, round-robin over the endpoints that may start one. */
  private pump(): void {
    for (let job = this.queues.next(this.clock.now()); job !== null; job = this.queues.next(this.clock.now())) {
      void this.track(this.attempt(job));
    }
  }

  /** One attempt: the request (its deadline starts now), the circuit bookkeeping, then its record (group-committed). */
  private async attempt(job: Job): Promise<void> {
    const { claim, target } = job;
    let slotFreed = false;
    try {
      if (this.clock.now() + this.settings.timeoutMs + LEASE_MARGIN_MS >= claim.lockedUntil) {
        // It waited too long: another instance may take the delivery when the lease ends, so sending now could send it twice.
        slotFreed = true;
        this.queues.dropped(job);
        this.slotFreed(job);
        await this.outbox.release([claim]);
        this.noteBacklog();
        return;
      }
      const startedAt = this.clock.now();
      const attemptNumber = claim.attemptCount + 1;
      const result = await this.send(claim, target, attemptNumber, startedAt);
      const endedAt = this.clock.now();
      this.attemptMs += (result.durationMs - this.attemptMs) * ATTEMPT_MS_WEIGHT;
      slotFreed = true;
      const opened = this.queues.finished(job, result.outcome, endedAt);
      if (opened) void this.track(this.circuitOpened(opened));
      this.unrecorded++;
      this.slotFreed(job); // the next attempt starts now, while this one is being recorded
      try {
        await this.record(claim, attemptRecord(attemptNumber, startedAt, result, endedAt));
      } finally {
        this.unrecorded--;
        this.drainIfBacklog();
      }
    } catch (error) {
      if (!slotFreed) {
        this.queues.dropped(job);
        this.slotFreed(job);
      }
      this.logger.error(`Delivery ${claim.id}: attempt not recorded, retried after its lease expires`, (error as Error).stack);
    }
  }

  /** A slot is free again: start the next queued attempts, and claim more when the outbox has work waiting. */
  private slotFreed(job: Job): void {
    if (this.leftOut.delete(job.userId)) this.backlog = true;
    this.pump();
    this.drainIfBacklog();
  }

  /** Signs and sends; a target without a usable secret is refused without a request, never sent unsigned. */
  private send(claim: ClaimedDelivery, target: WebhookTarget, attempt: number, nowMs: number): Promise<AttemptResult> {
    if (target.unusableSecret || !target.secret) return Promise.resolve(refusedUnsigned(target.unusableSecret ?? 'no signing secret'));
    const { url, secret } = target;
    const { body, type, eventId } = claim;
    return this.sender.send(buildWebhookRequest({ url, secret, body, type, eventId, attempt, userAgent: this.settings.userAgent, nowMs }));
  }

  private async record(claim: ClaimedDelivery, record: AttemptRecord): Promise<void> {
    if (!(await this.records.submit({ claim, record }))) {
      this.logger.warn(`Delivery ${claim.id}: lease lost before the attempt was recorded`);
      return;
    }
    const { id: deliveryId, eventId, userId, type, attemptCount } = claim;
    const { result, status } = record;
    const { outcome, durationMs, statusCode } = result;
    this.events.emit('attemptRecorded', {
      deliveryId,
      eventId,
      userId,
      type,
      attemptNumber: attemptCount + 1,
      outcome,
      durationMs,
      statusCode,
      status,
    });
  }

  private async circuitOpened(opened: CircuitOpened<Job>): Promise<void> {
    const host = opened.endpoint.slice(opened.endpoint.indexOf(' ') + 1);
    const waiting = await this.park(
      opened.parked.map((job) => job.claim),
      opened,
    );
    this.logger.warn(`User ${opened.userId}, host ${host}: ${opened.reason}; ${waiting} deliveries parked until then`);
    this.events.emit('circuitOpened', { userId: opened.userId, host, until: opened.until, parked: waiting });
    this.wakeAt(opened.until);
  }

  /** Drains when a parked endpoint's probe time comes (one timer, for the earliest such time). */
  private wakeAt(at: number): void {
    if (this.probeTimer && this.probeTimer.at <= at) return;
    if (this.probeTimer) clearTimeout(this.probeTimer.timer);
    const timer = setTimeout(
      () => {
        this.probeTimer = null;
        this.noteBacklog();
      },
      Math.max(0, at - this.clock.now()),
    );
    timer.unref();
    this.probeTimer = { at, timer };
  }

  private async park(
    claims: readonly ClaimedDelivery[],
    endpoint: { userId: number; types: readonly EventType[]; until: number; reason: string },
  ): Promise<number> {
    const parked = await this.outbox.park(claims, endpoint, endpoint.until, endpoint.reason, this.clock.now());
    this.events.emit('deliveriesParked', { userId: endpoint.userId, count: parked, until: endpoint.until });
    return parked;
  }

  private async cancel(claim: ClaimedDelivery): Promise<void> {
    const cancelled = await this.outbox.cancel(claim, this.clock.now(), 'webhook disabled for this event type');
    if (cancelled) this.events.emit('deliveryCancelled', { deliveryId: claim.id, userId: claim.userId, type: claim.type });
  }

  private noteBacklog(): void {
    this.backlog = true;
    this.drainIfBacklog();
  }

  /**
   * How many deliveries this instance holds at most now: its memory bound, and no more than its slots can start
   * before a lease taken now would end, at the recent attempt duration.
   */
  private capacity(): number {
    const { concurrency, leaseMs, timeoutMs } = this.settings;
    const startable = Math.floor((concurrency * (leaseMs - timeoutMs - LEASE_MARGIN_MS)) / Math.max(this.attemptMs, 1));
    return Math.max(1, Math.min(this.queues.capacity, startable));
  }

  /** How many more deliveries this instance takes now. */
  private room(): number {
    return this.stopping ? 0 : Math.max(0, this.capacity() - this.queues.held - this.unrecorded);
  }

  /** Claims the outbox's due work once a batch (or half the capacity) fits again, instead of waiting for the next scheduler run. */
  private drainIfBacklog(): void {
    if (this.backlog && !this.stopping && this.draining === null && this.room() >= Math.min(this.settings.batchSize, this.capacity() / 2)) {
      this.backlog = false;
      // Nobody awaits this drain: a failed claim (the database went away) is logged by track() and retried by the next
      // scheduler run; it must not become an unhandled rejection, which ends the process.
      this.drain().catch(() => undefined);
    }
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.tracked.add(work);
    void work
      .catch((error: unknown) => this.logger.error('Delivery work failed', (error as Error).stack))
      .finally(() => this.tracked.delete(work));
    return work;
  }
}

/** Deliveries an instance holds in memory per slot (queued or in flight): enough to ride out bursts without claims. */
const HELD_PER_SLOT = 16;
/** Deliveries held per slot of one endpoint: a slow endpoint's queue starts well within a lease (4 × 5 s). */
const HELD_PER_ENDPOINT_SLOT = 4;
/** Recovered deliveries that become due per second in a process (all its recover calls together): live traffic keeps the room it needs. */
export const RECOVER_PER_SECOND = 100;
/** Deliveries one recover call queues at most; a later call queues the rest (those already recovered are skipped). */
export const RECOVER_LIMIT = 10_000;
/** How often a `worker` process looks for due deliveries (what `api` processes stored, expired leases). */
const POLL_INTERVAL_MS = 1_000;
/** Weight of the latest attempt in the moving average of attempt durations. */
const ATTEMPT_MS_WEIGHT = 0.05;
