import { Logger } from '@nestjs/common';
import type { Clock } from '../../clock/clock';
import type { PreferencesService, WebhookTarget } from '../../preferences/preferences.service';
import { webhookKey } from '../../preferences/webhook-key';
import type { DeliveryEvents } from '../events/delivery-events.service';
import { type DeliverySettings, LEASE_MARGIN_MS } from '../delivery-settings';
import type { AttemptResult } from '../http/attempt-result';
import type { WebhookSender } from '../http/webhook-sender';
import type { PartitionOwnership } from '../partitions/partition-ownership';
import { partitionOf } from '../partitions/partitions';
import type { DeliveryTracing } from '../trace-context/delivery-tracing';
import { buildWebhookRequest } from '../wire/webhook-request';
import { attemptRecord, refusedUnsigned, skippedForOpenCircuit } from './attempt-record';
import { AttemptRecords } from './attempt-records';
import { isUnreachable } from './circuit-breaker';
import type { EngineWork } from './engine-work';
import { type OpenedCircuit, type EndpointKey, type EndpointQueues, endpointKeyOf, hostOf, type QueuedAttempt } from './endpoint-queues';
import type { InstanceCapacity, LeaseStep } from './instance-capacity';
import type { ClaimedDelivery, OutboxStore } from './outbox-store';
import type { WakeUps } from './wake-ups';
import { DeliveryStatus } from '../entities/webhook-delivery.entity';

/** The webhook target of each `webhookKey(userId, type)`. */
export type Targets = ReadonlyMap<string, WebhookTarget>;

/** A leased delivery waiting in its endpoint's queue, or in flight. */
export interface Job extends QueuedAttempt {
  readonly claim: ClaimedDelivery;
  readonly target: WebhookTarget;
  /**
   * Its {@link LeaseStep}: `acquire` until the queues hand it a slot and it fits its leases, then `send` while its request
   * is in flight, then `settle` (its record) or, when it no longer fits, `release`. The queues hear of its slot once,
   * as it leaves `acquire` or `send`.
   */
  step: Extract<LeaseStep, 'acquire' | 'send' | 'settle' | 'release'>;
}

/** A leased delivery skipped for its endpoint's open circuit, with the target it would have gone to. */
type SkippedJob = Pick<Job, 'claim' | 'target'>;

/**
 * Runs the attempts of leased deliveries, each lease in one {@link LeaseStep} at a time: admits them (queued behind
 * their endpoint, skipped while its circuit is open, cancelled when the webhook is off), starts queued attempts while
 * there are free slots, sends each one signed (its deadline starts with the request) and settles it: its record, records
 * of concurrent attempts group-committed in one transaction, retried when they fail. Every lease counts against the
 * instance's room in every step, until its record, release or cancel has completed.
 */
export class AttemptRunner {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly records: AttemptRecords;
  /** Attempts in flight per partition. */
  private readonly partitionsInFlight = new Map<number, number>();

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
    private readonly ownership: PartitionOwnership,
    private readonly tracing: DeliveryTracing,
  ) {
    this.records = new AttemptRecords(outbox, clock, events, settings.batchSize, { capacity, wakeUps });
  }

  /** Resolves when the records submitted so far are committed (or given up). */
  recordsIdle(): Promise<void> {
    return this.records.idle();
  }

  /** Queues leased deliveries behind their endpoints, parks those whose circuit is open, cancels those whose webhook is off. */
  async admit(claims: readonly ClaimedDelivery[], known?: Targets): Promise<void> {
    if (claims.length === 0) return;
    if (this.work.stopping) {
      await this.release(claims);
      return;
    }
    let targets: Targets;
    this.capacity.enter('admit', claims.length);
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
      this.capacity.leave('admit', claims.length); // each enters its next step in this turn: queued, skipped, cancelled or released
    }
    if (this.work.stopping) {
      // The shutdown began while the targets were read: it took the queued attempts back already, and these go back too.
      await this.release(claims);
      return;
    }
    const now = this.clock.now();
    const skipped = new Map<EndpointKey, { userId: number; until: number; reason: string; jobs: SkippedJob[] }>();
    // Leased while this instance owned their partition, which has moved since (or is moving): the new owner decides.
    const elsewhere = new Set(claims.filter((claim) => !this.ownership.covers(claim.userId, now)));
    if (elsewhere.size > 0) void this.work.track(this.release([...elsewhere]));
    for (const claim of claims) {
      if (elsewhere.has(claim)) continue;
      const target = targets.get(webhookKey(claim.userId, claim.type));
      if (!target) {
        void this.work.track(this.cancel(claim));
        continue;
      }
      const endpoint = endpointKeyOf(claim.userId, target.url);
      const admission = this.queues.admission(endpoint, now, 0);
      if (typeof admission === 'object') {
        const group = skipped.get(endpoint) ?? { userId: claim.userId, until: admission.parkUntil, reason: admission.reason, jobs: [] };
        group.jobs.push({ claim, target });
        skipped.set(endpoint, group);
      } else {
        this.queues.push({ endpoint, userId: claim.userId, type: claim.type, claim, target, step: 'acquire' });
      }
    }
    for (const [endpoint, group] of skipped) this.skip(group.jobs, { endpoint, ...group });
    this.pump();
  }

  /** Starts queued attempts while this instance has free slots, round-robin over the endpoints that may start one. */
  pump(): void {
    for (let job = this.queues.next(this.clock.now()); job !== null; job = this.queues.next(this.clock.now())) {
      void this.work.track(this.attempt(job));
    }
  }

  /**
   * One attempt, handed a slot by the queues: it starts only while both its delivery's lease and its partition's cover its
   * deadline, record and the tolerated skew (else `release`); then `send` (the request, its deadline starting now) and
   * `settle` (the circuit's bookkeeping, then its record, group-committed, the slot free for the next attempt already).
   */
  private async attempt(job: Job): Promise<void> {
    const { claim } = job;
    try {
      if (!this.attemptFits(claim)) {
        // It waited too long, or its partition is no longer this instance's: another instance may take the delivery (its
        // clock ahead) or its partition, so sending now could send it twice, or past the endpoint's cap.
        job.step = 'release';
        this.queues.dropped(job);
        const released = this.release([claim]); // enters `release` now: the freed slot does not free its room
        this.slotFreed(job);
        await released;
        return;
      }
      job.step = 'send';
      const startedAt = this.clock.now();
      const partition = partitionOf(claim.userId);
      this.partitionsInFlight.set(partition, this.inFlight(partition) + 1);
      let settled: Promise<void>;
      try {
        settled = this.settle(job, startedAt, await this.send(claim, job.target, startedAt));
      } catch (error) {
        this.abandon(job);
        throw error;
      } finally {
        // After the circuit heard the answer and what it changed is queued to be kept: a partition moving away goes with
        // that written first, for its next owner to inherit.
        this.attemptEnded(partition);
      }
      await settled;
    } catch (error) {
      this.abandon(job);
      this.wakeUps.leaseGivenUp(claim.lockedUntil);
      this.logger.error(`Delivery ${claim.id}: attempt not recorded, retried after its lease expires`, (error as Error).stack);
    }
  }

  /** An attempt that failed before its answer was settled: its slot is free (once). */
  private abandon(job: Job): void {
    if (job.step !== 'acquire' && job.step !== 'send') return;
    job.step = 'release';
    this.queues.dropped(job);
    this.slotFreed(job);
  }

  /**
   * The attempt's answer: the circuit told and the slot freed now, then its record, committed while the next attempt
   * starts.
   */
  private settle(job: Job, startedAt: number, result: AttemptResult): Promise<void> {
    const { claim, target } = job;
    const endedAt = this.clock.now();
    this.capacity.attemptTook(result.durationMs);
    job.step = 'settle';
    if (result.outcome !== 'blocked') this.ownership.egress.noteRequest(job.endpoint, !isUnreachable(result.outcome), endedAt);
    const owned = this.ownership.holds(claim.userId, endedAt);
    const opened = this.queues.finished(job, result.outcome, endedAt, owned, startedAt + (result.sentAfterMs ?? 0));
    if (opened) this.circuitOpened(opened);
    const record = attemptRecord(claim.attemptCount + 1, startedAt, result, endedAt);
    const recorded = this.records.record(claim, record, target.url);
    this.slotFreed(job);
    return recorded.then(() => this.nextInTurn(claim, record.status));
  }

  /** Attempts of the partition's users in flight here: a partition moving to another instance goes once none is. */
  inFlight(partition: number): number {
    return this.partitionsInFlight.get(partition) ?? 0;
  }

  private attemptEnded(partition: number): void {
    const left = this.inFlight(partition) - 1;
    if (left > 0) this.partitionsInFlight.set(partition, left);
    else {
      this.partitionsInFlight.delete(partition);
      this.ownership.attemptsEnded(partition);
    }
  }

  /**
   * Whether an attempt starting now fits in the claim's lease and its partition's: its deadline, its record and the clock
   * skew we tolerate.
   */
  private attemptFits(claim: ClaimedDelivery): boolean {
    const end = this.clock.now() + this.settings.timeoutMs + LEASE_MARGIN_MS;
    return end < claim.lockedUntil && this.ownership.covers(claim.userId, end);
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
  private send(claim: ClaimedDelivery, target: WebhookTarget, nowMs: number): Promise<AttemptResult> {
    if (target.unusableSecret || !target.secret) return Promise.resolve(refusedUnsigned(target.unusableSecret ?? 'no signing secret'));
    const { url, secret, previousSecret } = target;
    const attempt = claim.attemptCount + 1;
    const { body, type, eventId, sequence } = claim;
    const userAgent = this.settings.userAgent;
    const span = { url, eventType: type, eventId, deliveryId: claim.id, attempt };
    return this.tracing.attempt(claim.trace, span, (traceHeaders) =>
      this.sender.send(
        buildWebhookRequest({ url, secret, previousSecret, body, type, eventId, attempt, sequence, userAgent, nowMs, traceHeaders }),
      ),
    );
  }

  /** An attempt opened the endpoint's circuit: its queued attempts are skipped until a probe gets an answer. */
  private circuitOpened(opened: OpenedCircuit<Job>): void {
    const host = hostOf(opened.endpoint);
    const skipped = this.skip(opened.parked, opened);
    this.logger.warn(`User ${opened.userId}, host ${host}: ${opened.reason}; ${skipped} queued attempts skipped`);
    this.events.emit('circuitOpened', { userId: opened.userId, host, until: opened.until, parked: skipped });
    this.wakeUps.probeAt(opened.until);
  }

  /**
   * Attempts that came due while their endpoint's circuit is open: each is recorded as a skipped attempt (outcome
   * `circuit_open`, no request) that counts as one of the 6, so the delivery keeps to the spec's schedule (next delay,
   * FAILED after the 6th) instead of waiting in the outbox for as long as the endpoint is dead.
   */
  private skip(jobs: readonly SkippedJob[], circuit: { endpoint: EndpointKey; userId: number; until: number; reason: string }): number {
    const now = this.clock.now();
    // A lease that cannot hold the record is no longer this instance's: after a pause the delivery may have been claimed
    // again, here too, and that claim's record of the same skip would read as this one's (announced twice). Not recorded,
    // it is released (where this lease still holds it), counted against the room until that completes (seed 156977:
    // given up instead, it left the room 3 s before its lease ended).
    const held = jobs.filter(({ claim }) => now + LEASE_MARGIN_MS < claim.lockedUntil);
    const lapsing = jobs.filter((job) => !held.includes(job)).map(({ claim }) => claim);
    if (lapsing.length > 0) void this.work.track(this.release(lapsing));
    if (held.length === 0) return 0;
    const result = skippedForOpenCircuit(hostOf(circuit.endpoint), circuit.until, circuit.reason);
    // Skipped, they no longer count against the user's share: a claim that left the user out for holding it claims for
    // them again as these records commit, as it does when attempts end (seed 15066: an expired lease waited for the tick).
    this.wakeUps.slotFreed(circuit.userId);
    for (const { claim, target } of held) {
      const record = attemptRecord(claim.attemptCount + 1, now, result, now);
      void this.work.track(this.records.record(claim, record, target.url).then(() => this.nextInTurn(claim, record.status)));
    }
    this.events.emit('deliveriesParked', { userId: circuit.userId, count: held.length, until: circuit.until });
    return held.length;
  }

  /**
   * Hands leased deliveries back to the outbox, due, for the next claim (of any instance). They are leased here until
   * the release completes, so they count against the room until then (from this call, synchronously). A failed release
   * leaves them leased: a timer claims them when their lease ends, not the minute tick.
   */
  async release(claims: readonly ClaimedDelivery[]): Promise<void> {
    if (claims.length === 0) return;
    this.capacity.enter('release', claims.length);
    try {
      await this.outbox.release(claims);
    } catch (error) {
      this.logger.warn(`${claims.length} deliveries not released (${(error as Error).message}); claimed again when their lease ends`);
      this.wakeUps.leaseGivenUp(Math.min(...claims.map((claim) => claim.lockedUntil)));
      return;
    } finally {
      this.capacity.leave('release', claims.length);
    }
    void this.wakeUps.wake('backlog');
  }

  /** Ends a delivery whose webhook is off; counted against the room until done, claimed again at its lease's end if it fails. */
  private async cancel(claim: ClaimedDelivery): Promise<void> {
    let cancelled: boolean;
    this.capacity.enter('cancel', 1);
    try {
      cancelled = await this.outbox.cancel(claim, this.clock.now(), 'webhook disabled for this event type');
    } catch (error) {
      this.logger.warn(`Delivery ${claim.id}: not cancelled (${(error as Error).message}); claimed again when its lease ends`);
      this.wakeUps.leaseGivenUp(claim.lockedUntil);
      return;
    } finally {
      this.capacity.leave('cancel', 1);
      void this.wakeUps.wake('room');
    }
    if (cancelled) this.events.emit('deliveryCancelled', { deliveryId: claim.id, userId: claim.userId, type: claim.type });
    if (cancelled) this.nextInTurn(claim, DeliveryStatus.CANCELLED);
  }

  /**
   * A delivery of an ordered stream became final: the next one of its stream may now be claimed, so claim at once
   * rather than at the next poll or minute tick (nothing else tells this instance that it waits).
   */
  private nextInTurn(claim: ClaimedDelivery, status: DeliveryStatus): void {
    if (claim.ordered && status !== DeliveryStatus.PENDING) void this.wakeUps.wake('backlog');
  }
}
