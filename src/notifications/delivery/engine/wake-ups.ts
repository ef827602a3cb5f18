import { Logger } from '@nestjs/common';
import type { Clock, ClockTimer } from '../../clock/clock';
import type { DeliverySettings } from '../delivery-settings';
import type { Ownership } from '../partitions/partitions';
import type { EngineWork } from './engine-work';
import type { EndpointQueues, QueuedAttempt } from './endpoint-queues';
import { HELD_PER_ENDPOINT_SLOT, type InstanceCapacity } from './instance-capacity';
import type { Claimed, ClaimedDelivery, Lease, OutboxStore } from './outbox-store';

/**
 * Why the engine wakes: `backlog`, due work waits in the outbox that this instance had no room for (or could not
 * start); `room`, room may have freed (a drain, an attempt or a record ended): drain if a backlog was noted; `poll`, a
 * timer's look into the outbox (one cheap query), a drain when something is due.
 */
export type WakeReason = 'backlog' | 'room' | 'poll';

/** How a `worker` process looks for due deliveries (what `api` processes stored, expired leases). */
const POLL_INTERVAL_MS = 1_000;
/** How long after a failed claim or look for due work (the database went away) this instance claims again. */
const CLAIM_RETRY_MS = 1_000;
/**
 * Drains for other instances' wake-ups start at least this far apart: a lone wake-up drains at once, but under load the
 * wake-ups of many publishes share one claim instead of each making its own (back to back, they cost the database
 * more than the load itself).
 */
export const WOKEN_DRAIN_SPACING_MS = 25;

/**
 * When this instance drains: the drain itself (claims what is due while there is room, a call during a drain joins it),
 * and every reason to start one on its own, through one {@link wake}: the backlog flag, the users the last claim left out
 * for holding their share, the probe timer (an open circuit's cool-down ends), the lease timer (another instance's lease
 * ends) and the poll timer (a `worker` always, any process while its recoveries come due).
 */
export class WakeUps {
  private readonly logger = new Logger('WebhookDelivery');
  private draining: Promise<number> | null = null;
  /** Due deliveries may be waiting in the outbox that this instance had no room for. */
  private backlog = false;
  /** Users the last claim left out because they held their share: when one of their attempts ends, claim again. */
  private leftOut = new Set<number>();
  /** Wakes the engine when the earliest open circuit lets a probe through, instead of waiting for the minute tick. */
  private probeTimer: { at: number; timer: ClockTimer } | null = null;
  /** In a `worker` process: looks for due deliveries every second, so what `api` processes publish starts at once. */
  private pollTimer: ClockTimer | null = null;
  private pollingUntil = 0;
  /** Drains when the earliest lease known ends: another instance's (it may have died; an `all` process) or one given up here. */
  private leaseTimer: { at: number; timer: ClockTimer } | null = null;
  /** After a claim or a look for due work failed: claims again shortly, whatever woke the engine then is not repeated. */
  private retryTimer: ClockTimer | null = null;
  /** When the last drain started, and the drain for wake-ups that came sooner than {@link WOKEN_DRAIN_SPACING_MS} after it. */
  private drainStartedAt = Number.NEGATIVE_INFINITY;
  private wokenTimer: ClockTimer | null = null;
  /** After a read of the running leases failed: reads again shortly (the lease ends it would have watched are unknown). */
  private leaseReadRetry: ClockTimer | null = null;
  private leaseReadsFailing = false;
  /** Since when claims fail (the database is away): the first failure is logged, then none until one succeeds again. */
  private claimsFailingSince: number | null = null;

  constructor(
    private readonly outbox: OutboxStore,
    private readonly clock: Clock,
    private readonly settings: DeliverySettings,
    private readonly queues: EndpointQueues<QueuedAttempt>,
    private readonly capacity: InstanceCapacity,
    private readonly work: EngineWork,
    private readonly engine: { lease(): Lease; admit(claims: readonly ClaimedDelivery[]): Promise<void>; owned(): Promise<Ownership> },
  ) {}

  /**
   * Starts a drain if there is a reason to (see {@link WakeReason}) and room for a batch, unless one runs already or the
   * engine is stopping. Resolves when a poll's drain ends; a drain started for a backlog is awaited by nobody: a failed
   * claim (the database went away) is logged and retried {@link CLAIM_RETRY_MS} later ({@link retryClaimIfFailed}).
   */
  wake(reason: WakeReason): Promise<void> {
    // A poll that cannot drain now (a drain runs, which may have claimed before what the poll is for came due, or there
    // is no room for a batch) is not dropped: it leaves a backlog, drained when that drain ends or room frees.
    if (reason === 'backlog' || (reason === 'poll' && (this.draining !== null || !this.capacity.fitsBatch()))) this.backlog = true;
    if (this.work.stopping || this.draining !== null || !this.capacity.fitsBatch()) return Promise.resolve();
    if (reason === 'poll') return this.drainIfDue().catch(() => undefined); // logged, and retried, by retryClaimIfFailed
    if (this.backlog) {
      this.backlog = false;
      this.drain().catch(() => undefined);
    }
    return Promise.resolve();
  }

  /**
   * Another instance left due work in this instance's partitions (its wake-up): a drain now, or, within
   * {@link WOKEN_DRAIN_SPACING_MS} of the last one's start, one drain for every wake-up until then.
   */
  woken(): void {
    if (!this.work.delivers || this.work.stopping || this.wokenTimer !== null) return;
    const wait = this.drainStartedAt + WOKEN_DRAIN_SPACING_MS - this.clock.now();
    if (wait <= 0) {
      void this.wake('backlog');
      return;
    }
    this.wokenTimer = this.clock.setTimeout(() => {
      this.wokenTimer = null;
      void this.wake('backlog');
    }, wait);
  }

  /** An attempt of `userId` ended: if the last claim left the user out, it may claim for them again. */
  slotFreed(userId: number): void {
    if (this.leftOut.delete(userId)) this.backlog = true;
  }

  /**
   * Claims what is due, as much as this instance can hold, and starts it; resolves with how many were claimed. Keeps
   * claiming while due work remains and there is room; what does not fit is claimed as soon as capacity frees. A call
   * during a drain joins it.
   */
  drain(): Promise<number> {
    if (!this.work.delivers) return Promise.resolve(0);
    if (this.draining === null) {
      this.drainStartedAt = this.clock.now();
      const drained = this.retryClaimIfFailed(this.claimWhileRoom());
      void this.work.track(drained.catch(() => undefined)); // a failed claim is logged once per outage (retryClaimIfFailed)
      this.draining = drained.finally(() => {
        this.draining = null;
        void this.wake('room');
      });
    }
    return this.draining;
  }

  /** Stops the poll kept up from the start; a poll for recoveries coming due is armed again as they are queued. */
  stopPolling(): void {
    this.pollingUntil = 0;
    this.pollTimer?.cancel();
    this.pollTimer = null;
  }

  /** Looks for due work every second until `until` (a worker: always). */
  pollUntil(until: number): void {
    this.pollingUntil = Math.max(this.pollingUntil, until);
    if (this.pollTimer || this.work.stopping) return;
    this.pollTimer = this.clock.setInterval(() => {
      if (this.clock.now() > this.pollingUntil + POLL_INTERVAL_MS && this.pollTimer) {
        this.pollTimer.cancel();
        this.pollTimer = null;
      }
      void this.work.track(this.wake('poll'));
    }, POLL_INTERVAL_MS);
  }

  /**
   * In an `all` process: arms a timer for when the earliest lease running at `since` ends, so the deliveries of an
   * instance that died or paused are retaken within seconds of their lease's end. When it fires it polls and looks again,
   * from when it fired: a lease that ended while that poll's claim ran is still watched (seed 117552: a lease ending 44 ms
   * after the one the timer stood for was neither claimed by its poll nor running when the poll looked again).
   */
  async watchLeases(since = this.clock.now()): Promise<void> {
    if (this.settings.role !== 'all' || this.work.stopping) return;
    let until: number | null;
    try {
      until = await this.outbox.nextLeaseExpiry(since);
    } catch (error) {
      // The lease timer stood for every lease end known (the earliest): without this read, the later ones would wait for
      // the next scheduler run (seed 100847: a host commit's lease, read during an outage). Read again every second.
      if (!this.leaseReadsFailing)
        this.logger.warn(`Lease expiry not read (${(error as Error).message}); reading it again every ${CLAIM_RETRY_MS / 1000} s`);
      this.leaseReadsFailing = true;
      if (!this.work.stopping && this.leaseReadRetry === null)
        this.leaseReadRetry = this.clock.setTimeout(() => {
          this.leaseReadRetry = null;
          void this.work.track(this.watchLeases(since));
        }, CLAIM_RETRY_MS);
      return;
    }
    this.leaseReadsFailing = false;
    if (until !== null) this.wakeWhenLeaseEnds(until);
  }

  /**
   * A lease this instance may not see through (its attempt's record or release failed, its host transaction committed
   * after other instances last looked): the delivery is claimed again as soon as it ends, by this instance if no other.
   */
  leaseGivenUp(until: number): void {
    if (this.work.delivers) this.wakeWhenLeaseEnds(until);
  }

  /**
   * A call that leases rows with `lease`: when it fails, it may have committed before its answer was lost, so what it
   * leased is claimed again as soon as the lease ends (not at the next scheduler run).
   */
  async leasing<T>(lease: Lease, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      this.leaseGivenUp(lease.until);
      throw error;
    }
  }

  /** One timer, for the earliest lease end known: it polls, then looks for the next one (in an `all` process). */
  private wakeWhenLeaseEnds(until: number): void {
    // A claim takes leases that ended before its time. The timer is armed for the earliest lease end known: a timer armed
    // for an earlier time covers this one (when it fires, it reads the next lease end); one whose time has passed without
    // firing yet (due in this turn, or the clock jumped) is armed again to fire at once, never moved later (seed 2485: a
    // host commit's past lease end was replaced by a later one, and its delivery waited for the next minute tick).
    const at = Math.min(until + 1, this.leaseTimer?.at ?? Number.POSITIVE_INFINITY);
    const covered = this.leaseTimer !== null && this.leaseTimer.at === at && at > this.clock.now();
    if (this.work.stopping || covered) return;
    this.leaseTimer?.timer.cancel();
    const timer = this.clock.setTimeout(
      () => {
        this.leaseTimer = null;
        // Looks for the next lease end even when this poll failed (it claims again on its own): the leases watched so far
        // would otherwise wait for the next scheduler run. A claim starts at or after `firedAt` (this poll's, or the one
        // after the running drain): what ended before then is claimed; what ends after it is watched.
        const firedAt = this.clock.now();
        void this.work.track(this.wake('poll').finally(() => this.watchLeases(firedAt)));
      },
      Math.max(0, at - this.clock.now()),
    );
    this.leaseTimer = { at, timer };
  }

  /**
   * Wakes the engine when an open circuit's probe time comes: one timer, for the earliest such time; when it fires it is
   * armed again for the next open circuit, so every circuit's probe goes out when its cool-down ends, not at the next
   * minute tick.
   */
  probeAt(at: number): void {
    if (this.work.stopping || (this.probeTimer && this.probeTimer.at <= at)) return;
    this.probeTimer?.timer.cancel();
    const timer = this.clock.setTimeout(
      () => {
        this.probeTimer = null;
        void this.wake('backlog');
        const next = this.queues.nextReopening(this.clock.now());
        if (next !== null) this.probeAt(next);
      },
      Math.max(0, at - this.clock.now()),
    );
    this.probeTimer = { at, timer };
  }

  /** Shutdown: no timer wakes the engine again. */
  stop(): void {
    this.pollTimer?.cancel();
    this.pollTimer = null;
    this.probeTimer?.timer.cancel();
    this.leaseTimer?.timer.cancel();
    this.wokenTimer?.cancel();
    this.wokenTimer = null;
    this.retryTimer?.cancel();
    this.retryTimer = null;
    this.leaseReadRetry?.cancel();
    this.leaseReadRetry = null;
  }

  /** A poll: one cheap look for due deliveries, a drain when there are some. */
  private async drainIfDue(): Promise<void> {
    const owned = await this.engine.owned();
    if (await this.retryClaimIfFailed(this.outbox.anyDue(this.clock.now(), owned))) await this.drain();
  }

  /**
   * A claim (or a look for due work) that fails leaves work the engine knew of or was woken for (a backlog, a user
   * claimed for again as their attempts end, an expired lease, recoveries coming due) unclaimed: what woke it will not
   * come again, so nothing would claim it before the next minute tick. Claims again {@link CLAIM_RETRY_MS} later
   * (again after each failure while the database is away). The failure is passed on, and logged once per outage: a
   * warning at the first, a line when claims work again.
   */
  private async retryClaimIfFailed<T>(claim: Promise<T>): Promise<T> {
    try {
      const claimed = await claim;
      if (this.claimsFailingSince !== null) {
        this.logger.log(
          `Due deliveries are claimed again (claims failed for ${Math.round((this.clock.now() - this.claimsFailingSince) / 1000)} s)`,
        );
        this.claimsFailingSince = null;
      }
      return claimed;
    } catch (error) {
      if (this.claimsFailingSince === null) {
        this.claimsFailingSince = this.clock.now();
        this.logger.warn(
          `Due deliveries could not be claimed (${(error as Error).message}); trying again every ${CLAIM_RETRY_MS / 1000} s until the database answers`,
        );
      }
      if (!this.work.stopping && this.retryTimer === null)
        this.retryTimer = this.clock.setTimeout(() => {
          this.retryTimer = null;
          void this.wake('backlog');
        }, CLAIM_RETRY_MS);
      throw error;
    }
  }

  private async claimWhileRoom(): Promise<number> {
    this.queues.forgetIdle(this.clock.now());
    let claimed = 0;
    while (!this.work.stopping) {
      const room = Math.min(this.settings.batchSize, this.capacity.room());
      if (room === 0) {
        this.backlog = true;
        break;
      }
      const fairness = { perUser: this.settings.perEndpointConcurrency * HELD_PER_ENDPOINT_SLOT, heldByUser: this.queues.heldByUser() };
      let claim: Claimed;
      // The room this claim may fill counts as held while it runs: an enqueue or a redelivery meanwhile must not lease
      // into it. Let go in the turn the claim resolves, in which admit counts what it took.
      this.capacity.enter('claim', room);
      try {
        const owned = await this.engine.owned();
        const lease = this.engine.lease();
        claim = await this.leasing(lease, () => this.outbox.claimDue(room, lease, fairness, owned));
      } finally {
        this.capacity.leave('claim', room);
      }
      const { claims, exhausted, excluded } = claim;
      if (this.work.stopping) {
        // Shutdown began while this claim ran: admit hands its rows back to the outbox for other instances, unattempted
        // (counted as being released until they are).
        await this.engine.admit(claims);
        break;
      }
      claimed += claims.length;
      await this.engine.admit(claims);
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
}
