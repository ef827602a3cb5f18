import { Logger } from '@nestjs/common';
import type { Clock, ClockTimer } from '../../clock/clock';
import type { PreferencesService, WebhookTarget } from '../../preferences/preferences.service';
import { webhookKey } from '../../preferences/webhook-key';
import type { DeliveryEvents } from '../delivery-events.service';
import { type DeliverySettings, LEASE_MARGIN_MS } from '../delivery-settings';
import type { AttemptResult } from '../http/attempt-result';
import type { WebhookSender } from '../http/webhook-sender';
import type { DeliveryTracing } from '../trace-context/delivery-tracing';
import { buildWebhookRequest } from '../webhook-request';
import { attemptRecord, refusedUnsigned, skippedForOpenCircuit } from './attempt-record';
import { AttemptRecords } from './attempt-records';
import type { EngineWork } from './engine-work';
import { type OpenedCircuit, type EndpointKey, type EndpointQueues, endpointKeyOf, hostOf, type QueuedAttempt } from './endpoint-queues';
import type { InstanceCapacity } from './instance-capacity';
import { isUnreachable } from './circuit-breaker';
import { EndpointSlots, SLOT_RETRY_MAX_MS, SLOT_RETRY_MS } from './endpoint-slots';
import type { ClaimedDelivery, EndpointProbe, EndpointSlot, OutboxStore, SlotTaken } from './outbox-store';
import type { WakeUps } from './wake-ups';

/** The webhook target of each `webhookKey(userId, type)`. */
export type Targets = ReadonlyMap<string, WebhookTarget>;

/** A leased delivery waiting in its endpoint's queue, or in flight. */
export interface Job extends QueuedAttempt {
  readonly claim: ClaimedDelivery;
  readonly target: WebhookTarget;
}

/**
 * Runs the attempts of leased deliveries: admits them (queued behind their endpoint, skipped while its circuit is open,
 * cancelled when the webhook is off), starts queued attempts while there are free slots, sends each one signed (its
 * deadline starts with the request) and records it, records of concurrent attempts group-committed in one transaction.
 * A record that fails is retried. Every lease it holds counts against the instance's room until it is queued, or its
 * record, release or cancel has completed.
 */
export class AttemptRunner {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly records: AttemptRecords;
  private readonly slots: EndpointSlots;
  /** Endpoints waiting for a slot: the timer that lets their next attempt try again. */
  private readonly retries = new Map<EndpointKey, ClockTimer>();

  constructor(
    private readonly outbox: OutboxStore,
    private readonly preferences: PreferencesService,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly events: DeliveryEvents,
    private readonly settings: DeliverySettings,
    private readonly queues: EndpointQueues<Job>,
    private readonly capacity: InstanceCapacity,
    private readonly wakeUps: WakeUps,
    private readonly work: EngineWork,
    private readonly tracing: DeliveryTracing,
  ) {
    this.records = new AttemptRecords(outbox, clock, events, settings.batchSize, { capacity, wakeUps });
    this.slots = new EndpointSlots(outbox, clock, settings, work, (endpoint) => queues.hasQueued(endpoint));
  }

  /** Resolves when the records and slot releases submitted so far are committed (or given up). */
  async recordsIdle(): Promise<void> {
    await Promise.all([this.records.idle(), this.slots.idle()]);
  }

  /** Shutdown: the endpoint slots kept for queued attempts go back to the store (the queued attempts were taken out). */
  releaseSpareSlots(): void {
    for (const timer of this.retries.values()) timer.cancel();
    this.retries.clear();
    this.slots.releaseAll();
  }

  /** Queues leased deliveries behind their endpoints, parks those whose circuit is open, cancels those whose webhook is off. */
  async admit(claims: readonly ClaimedDelivery[], known?: Targets): Promise<void> {
    if (claims.length === 0) return;
    if (this.work.stopping) {
      await this.release(claims);
      return;
    }
    let targets: Targets;
    this.capacity.hold(claims.length); // leased here while their targets are read
    try {
      targets = known ?? (await this.preferences.webhookTargets(claims));
    } catch (error) {
      this.logger.error(
        `Webhook targets of ${claims.length} deliveries could not be read; released for a later run`,
        (error as Error).stack,
      );
      await this.release(claims);
      return;
    } finally {
      this.capacity.letGo(claims.length); // what follows counts them again, in this turn: queued, skipped or cancelled
    }
    const now = this.clock.now();
    const skipped = new Map<EndpointKey, { userId: number; until: number; reason: string; claims: ClaimedDelivery[] }>();
    for (const claim of claims) {
      const target = targets.get(webhookKey(claim.userId, claim.type));
      if (!target) {
        void this.work.track(this.cancel(claim));
        continue;
      }
      const endpoint = endpointKeyOf(claim.userId, target.url);
      const admission = this.queues.admission(endpoint, now, 0);
      if (typeof admission === 'object') {
        const group = skipped.get(endpoint) ?? { userId: claim.userId, until: admission.parkUntil, reason: admission.reason, claims: [] };
        group.claims.push(claim);
        skipped.set(endpoint, group);
      } else {
        this.queues.push({ endpoint, userId: claim.userId, type: claim.type, claim, target });
      }
    }
    for (const [endpoint, group] of skipped) this.skip(group.claims, { endpoint, ...group });
    this.pump();
  }

  /**
   * Starts queued attempts while this instance has free slots, round-robin over the endpoints that may start one; then
   * gives back (after a while) the endpoint slots that no attempt queued here will use.
   */
  pump(): void {
    for (let job = this.queues.next(this.clock.now()); job !== null; job = this.queues.next(this.clock.now())) {
      void this.work.track(this.attempt(job));
    }
    this.slots.releaseUnneeded();
  }

  /**
   * One attempt: a slot of its endpoint (all instances together), the request (its deadline starts now), the circuit
   * bookkeeping, then its record (group-committed).
   */
  private async attempt(job: Job): Promise<void> {
    const { claim, target } = job;
    let slotFreed = false;
    let slot: EndpointSlot | null = null;
    let probing: EndpointProbe | null = null; // this instance holds the endpoint's probe (claimProbe)
    let requested = false;
    try {
      // A half-open circuit lets one request through, all instances together: the probe is taken first (in the store).
      const probe = this.queues.isHalfOpen(job.endpoint, this.clock.now());
      slot = this.slots.spareFor(job.endpoint, this.clock.now());
      if (slot === null && this.attemptFits(claim)) {
        // Should the store not answer before the lease ends (a database outage), this instance looks for the delivery then.
        this.wakeUps.leaseGivenUp(claim.lockedUntil);
        const taken = await this.slots.take(job.endpoint, claim.lockedUntil, probe);
        if (!('holder' in taken)) {
          slotFreed = true;
          this.slotRefused(job, taken);
          return;
        }
        slot = taken;
      }
      if (probe && slot !== null) {
        const taken = await this.outbox.claimProbe(job.endpoint, this.clock.now(), claim.lockedUntil);
        if ('heldUntil' in taken) {
          slotFreed = true;
          this.slots.release(slot);
          slot = null;
          this.probeTakenElsewhere(this.queues.probeTakenElsewhere(job, taken.heldUntil));
          this.slotFreed(job);
          return;
        }
        probing = taken;
      }
      if (slot === null || !this.attemptFits(claim)) {
        // It waited too long: its deadline, its record and the clock skew we tolerate between instances no longer fit in
        // the lease; another instance (its clock ahead) may take the delivery, so sending now could send it twice.
        slotFreed = true;
        if (slot !== null) this.slots.release(slot);
        slot = null;
        this.queues.dropped(job);
        const released = this.release([claim]); // counted from here until released: the freed slot does not free its room
        this.slotFreed(job);
        // An unsent probe leaves the circuit open, its cool-down over: the next attempt there, of any instance, probes.
        if (probing) void this.work.track(this.probeEnded(probing, this.clock.now()));
        await released;
        return;
      }
      const startedAt = this.clock.now();
      const attemptNumber = claim.attemptCount + 1;
      requested = true;
      const result = await this.send(claim, target, attemptNumber, startedAt);
      const endedAt = this.clock.now();
      this.capacity.attemptTook(result.durationMs);
      slotFreed = true;
      const answered = !isUnreachable(result.outcome);
      // An answered probe closes the circuit in the store before it does here: an attempt of this instance that asked
      // for a slot before that would find it still open there, and be skipped as circuit_open.
      if (probing && answered) await this.probeEnded(probing, null);
      const failedBefore = this.queues.failuresInRow(job.endpoint);
      const opened = this.queues.finished(job, result.outcome, endedAt);
      if (opened) {
        this.slots.release(slot);
        this.circuitOpened(opened, probing !== null);
      } else if (!answered && this.settings.circuitBreaker.failuresToOpen > 0) {
        void this.work.track(this.countFailure(slot));
      } else {
        if (failedBefore > 0) void this.work.track(this.clearFailures(job.endpoint));
        this.handOn(slot);
      }
      slot = null;
      if (probing && !answered) void this.work.track(this.probeEnded(probing, opened?.until ?? null));
      const recorded = this.records.record(claim, attemptRecord(attemptNumber, startedAt, result, endedAt));
      this.slotFreed(job); // the next attempt starts now, while this one is being recorded
      await recorded;
    } catch (error) {
      if (slot !== null) this.slots.release(slot);
      if (!requested) {
        // The store failed before the request (taking a slot or the probe): the attempt waits in its queue, still held
        // (it counts against the room), and tries again a little later.
        this.postpone(job);
        this.logger.warn(`Delivery ${claim.id}: attempt postponed (${(error as Error).message})`);
        return;
      }
      if (!slotFreed) {
        this.queues.dropped(job);
        this.slotFreed(job);
      }
      this.wakeUps.leaseGivenUp(claim.lockedUntil);
      this.logger.error(`Delivery ${claim.id}: attempt not recorded, retried after its lease expires`, (error as Error).stack);
    }
  }

  /** Whether an attempt starting now still fits in the claim's lease: its deadline, its record and the clock skew we tolerate. */
  private attemptFits(claim: ClaimedDelivery): boolean {
    return this.clock.now() + this.settings.timeoutMs + LEASE_MARGIN_MS < claim.lockedUntil;
  }

  /**
   * The store gave no slot: all are held (by other instances), so the attempt goes back to the head of its queue and tries
   * again a little later; or another instance opened the circuit: while its cool-down runs, this attempt and those queued
   * behind it are skipped until then, as when another instance probes; once it is over, this instance's next attempt
   * there is a probe.
   */
  private slotRefused(job: Job, refusal: Exclude<SlotTaken, EndpointSlot>): void {
    const now = this.clock.now();
    if ('busy' in refusal) this.postpone(job);
    else if (refusal.openUntil > now) {
      this.probeTakenElsewhere(this.queues.probeTakenElsewhere(job, refusal.openUntil));
      this.slotFreed(job);
    } else {
      this.queues.postponed(job, refusal.openUntil);
      this.pump();
    }
  }

  /** Back to the head of its queue, to try again after the back-off (its endpoint waits meanwhile). */
  private postpone(job: Job): void {
    const wait = Math.min(SLOT_RETRY_MS * 2 ** this.queues.postponementsOf(job.endpoint), SLOT_RETRY_MAX_MS);
    this.queues.postponed(job);
    this.retryIn(job.endpoint, wait);
    this.pump();
  }

  /**
   * The endpoint's next attempt tries for a slot again in `ms` (or sooner, when an attempt of this instance frees one).
   * Tracked as work until then: the engine is not idle while an attempt waits for a slot.
   */
  private retryIn(endpoint: EndpointKey, ms: number): void {
    if (this.work.stopping || this.retries.has(endpoint)) return;
    void this.work.track(
      new Promise<void>((resolve) => {
        const timer = this.clock.setTimeout(() => {
          this.retries.delete(endpoint);
          this.releaseExpired(endpoint);
          this.queues.resume(endpoint);
          this.pump();
          resolve();
        }, ms);
        this.retries.set(endpoint, {
          cancel: () => {
            timer.cancel();
            resolve();
          },
        });
      }),
    );
  }

  /**
   * The attempts queued behind one waiting for a slot whose leases can no longer fit an attempt go back to the outbox,
   * due, for any instance to claim with a new lease: otherwise they would be looked at only when they reach the head.
   */
  private releaseExpired(endpoint: EndpointKey): void {
    const expired = this.queues.takeExpired(endpoint, (job) => !this.attemptFits(job.claim));
    if (expired.length > 0) void this.work.track(this.release(expired.map((job) => job.claim)));
  }

  /** A slot is free again: start the next queued attempts, and claim more when the outbox has work waiting. */
  private slotFreed(job: Job): void {
    this.wakeUps.slotFreed(job.userId);
    this.pump();
    void this.wakeUps.wake('room');
  }

  /**
   * Signs and sends, as a child span of the event's trace; a target without a usable secret is refused without a
   * request, never sent unsigned.
   */
  private send(claim: ClaimedDelivery, target: WebhookTarget, attempt: number, nowMs: number): Promise<AttemptResult> {
    if (target.unusableSecret || !target.secret) return Promise.resolve(refusedUnsigned(target.unusableSecret ?? 'no signing secret'));
    const { url, secret, previousSecret } = target;
    const { body, type, eventId } = claim;
    const userAgent = this.settings.userAgent;
    const span = { url, eventType: type, eventId, deliveryId: claim.id, attempt };
    return this.tracing.attempt(claim.trace, span, (traceHeaders) =>
      this.sender.send(buildWebhookRequest({ url, secret, previousSecret, body, type, eventId, attempt, userAgent, nowMs, traceHeaders })),
    );
  }

  /**
   * An attempt opened the endpoint's circuit: its queued attempts are skipped, and every instance is told (a failed probe
   * tells them through {@link probeEnded}), so that none sends there until a probe gets an answer.
   */
  private circuitOpened(opened: OpenedCircuit<Job>, byProbe: boolean): void {
    const host = hostOf(opened.endpoint);
    if (!byProbe) void this.work.track(this.shareOpening(opened.endpoint, opened.until));
    const skipped = this.skip(
      opened.parked.map((job) => job.claim),
      opened,
    );
    this.logger.warn(`User ${opened.userId}, host ${host}: ${opened.reason}; ${skipped} queued attempts skipped`);
    this.events.emit('circuitOpened', { userId: opened.userId, host, until: opened.until, parked: skipped });
    this.wakeUps.probeAt(opened.until);
  }

  /** Another instance probes the endpoint: this one's probe and the attempts queued behind it are skipped until then. */
  private probeTakenElsewhere(opened: OpenedCircuit<Job>): void {
    this.skip(
      opened.parked.map((job) => job.claim),
      opened,
    );
    this.wakeUps.probeAt(opened.until);
  }

  /**
   * Failures in a row are counted across instances too, as the shared cap spreads an endpoint's attempts over them: an
   * unreachable outcome adds one to the endpoint's count, and the circuit opens when that reaches the threshold; the
   * first answer after failures seen here starts it again ({@link clearFailures}). Should the store fail, each instance
   * counts on its own.
   */
  private async countFailure(slot: EndpointSlot): Promise<void> {
    const { endpoint } = slot;
    let opened: OpenedCircuit<Job> | null = null;
    try {
      // Counted before the slot goes on: it carries no other attempt between this failure and the opening it may cause.
      opened = this.queues.sharedFailures(endpoint, await this.outbox.countFailure(endpoint), this.clock.now());
    } catch (error) {
      this.logger.warn(`Host ${hostOf(endpoint)}: its failures in a row were not counted (${(error as Error).message})`);
    }
    if (opened) {
      this.slots.release(slot);
      this.circuitOpened(opened, false);
    } else this.handOn(slot);
    this.pump();
  }

  /** The first answer after failures seen here: the endpoint's failures in a row start again from 0, for every instance. */
  private async clearFailures(endpoint: EndpointKey): Promise<void> {
    try {
      await this.outbox.clearFailures(endpoint);
    } catch (error) {
      this.logger.warn(`Host ${hostOf(endpoint)}: its failures in a row were not cleared (${(error as Error).message})`);
    }
  }

  /** A slot whose request got its answer goes to the next attempt queued here for its endpoint, if any (see pump). */
  private handOn(slot: EndpointSlot): void {
    this.slots.keep(slot);
    this.queues.resume(slot.endpoint);
  }

  /** Tells the other instances that the endpoint's circuit is open; should that fail, each opens it on its own failures. */
  private async shareOpening(endpoint: EndpointKey, until: number): Promise<void> {
    try {
      await this.outbox.circuitOpened(endpoint, until);
    } catch (error) {
      this.logger.warn(`Host ${hostOf(endpoint)}: its open circuit was not stored (${(error as Error).message})`);
    }
  }

  /** Tells the other instances when they may probe the endpoint again; a failure here only lets them probe sooner. */
  private async probeEnded(probe: EndpointProbe, nextProbeAt: number | null): Promise<void> {
    try {
      await this.outbox.probeEnded(probe, nextProbeAt);
    } catch (error) {
      this.logger.warn(`Host ${hostOf(probe.endpoint)}: the end of its probe was not stored (${(error as Error).message})`);
    }
  }

  /**
   * Attempts that came due while their endpoint's circuit is open: each is recorded as a skipped attempt (outcome
   * `circuit_open`, no request) that counts as one of the 6, so the delivery keeps to the spec's schedule (next delay,
   * FAILED after the 6th) instead of waiting in the outbox for as long as the endpoint is dead.
   */
  private skip(
    claims: readonly ClaimedDelivery[],
    circuit: { endpoint: EndpointKey; userId: number; until: number; reason: string },
  ): number {
    if (claims.length === 0) return 0;
    const now = this.clock.now();
    const result = skippedForOpenCircuit(hostOf(circuit.endpoint), circuit.until, circuit.reason);
    // Skipped, they no longer count against the user's share: a claim that left the user out for holding it claims for
    // them again as these records commit, as it does when attempts end (seed 15066: an expired lease waited for the tick).
    this.wakeUps.slotFreed(circuit.userId);
    for (const claim of claims) void this.work.track(this.records.record(claim, attemptRecord(claim.attemptCount + 1, now, result, now)));
    this.events.emit('deliveriesParked', { userId: circuit.userId, count: claims.length, until: circuit.until });
    return claims.length;
  }

  /**
   * Hands leased deliveries back to the outbox, due, for the next claim (of any instance). They are leased here until
   * the release completes, so they count against the room until then (from this call, synchronously). A failed release
   * leaves them leased: a timer claims them when their lease ends, not the minute tick.
   */
  async release(claims: readonly ClaimedDelivery[]): Promise<void> {
    if (claims.length === 0) return;
    this.capacity.hold(claims.length);
    try {
      await this.outbox.release(claims);
    } catch (error) {
      this.logger.warn(`${claims.length} deliveries not released (${(error as Error).message}); claimed again when their lease ends`);
      this.wakeUps.leaseGivenUp(Math.min(...claims.map((claim) => claim.lockedUntil)));
      return;
    } finally {
      this.capacity.letGo(claims.length);
    }
    void this.wakeUps.wake('backlog');
  }

  /** Ends a delivery whose webhook is off; counted against the room until done, claimed again at its lease's end if it fails. */
  private async cancel(claim: ClaimedDelivery): Promise<void> {
    let cancelled: boolean;
    this.capacity.hold(1);
    try {
      cancelled = await this.outbox.cancel(claim, this.clock.now(), 'webhook disabled for this event type');
    } catch (error) {
      this.logger.warn(`Delivery ${claim.id}: not cancelled (${(error as Error).message}); claimed again when its lease ends`);
      this.wakeUps.leaseGivenUp(claim.lockedUntil);
      return;
    } finally {
      this.capacity.letGo(1);
      void this.wakeUps.wake('room');
    }
    if (cancelled) this.events.emit('deliveryCancelled', { deliveryId: claim.id, userId: claim.userId, type: claim.type });
  }
}
