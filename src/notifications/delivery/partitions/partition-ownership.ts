import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { Clock, ClockTimer } from '../../clock/clock';
import { type DeliverySettings, LEASE_MARGIN_MS } from '../delivery-settings';
import { type AliveInstance, EGRESS_STAND_DOWN_MS, EGRESS_WINDOW_MS, EgressWatch } from './egress-watch';
import type { KeptCircuit } from './kept-circuit';
import type { PartitionLease, PartitionLeases } from './partition-leases';
import { type Ownership, PARTITION_COUNT, partitionOf, preferredHolder } from './partitions';

/** How often an instance renews its partitions' leases, says it is alive, and moves partitions as membership changes. */
export const PARTITION_RENEW_MS = 5_000;
/** While partitions this instance should own are still another's, or its rounds fail, it tries again this often. */
const TAKE_RETRY_MS = 1_000;
/** A partition taken is kept at least this long before it moves to another holder: membership suggests, the lease decides. */
export const PARTITION_MIN_HOLD_MS = 2 * PARTITION_RENEW_MS;

/**
 * How long a partition's lease (and an instance's word that it is alive) runs from when its take or renewal was sent: an
 * attempt's deadline, its record and the tolerated skew, and three renewals that may fail before an attempt no longer fits.
 */
export function partitionLeaseMs(settings: Pick<DeliverySettings, 'timeoutMs'>): number {
  return settings.timeoutMs + LEASE_MARGIN_MS + 3 * PARTITION_RENEW_MS;
}

/** What the engine does when partitions come and go. */
export interface PartitionListener {
  /** Attempts of the partition's users in flight here now: a partition moving away is given back only when none is. */
  inFlight(partition: number): number;
  /**
   * These partitions are no longer this instance's (lost, or moving away): their queued attempts go back to the outbox.
   * Told again of one moving away once its last attempt here ended, just before it goes back.
   */
  lost(partitions: ReadonlySet<number>): void;
  /** This instance took partitions, or renewed leases too short to start an attempt on: their due deliveries are claimed now. */
  gained(): void;
  /**
   * The circuits kept for `partitions`, just taken: heard before any of their attempts may start. They are newer than
   * what the engine may still remember of those partitions' endpoints (attempts in flight as it lost them).
   */
  inherited(circuits: readonly KeptCircuit[], partitions: ReadonlySet<number>): void;
}

/**
 * When a lease ends, counted from when its take or last renewal was sent on both of this instance's clocks: the wall
 * clock the table's lease is written on (it also sees a pause the monotonic clock may not, such as a VM's suspension)
 * and the monotonic one (a wall clock stepped back would stretch the lease). It ends with the first of the two.
 */
interface LeaseEnd {
  until: number;
  untilMonotonic: number;
}

interface Held extends LeaseEnd {
  readonly epoch: number;
  readonly since: number;
}

const NEVER: LeaseEnd = { until: Number.POSITIVE_INFINITY, untilMonotonic: Number.POSITIVE_INFINITY };

/**
 * This instance's partitions (see {@link PARTITION_COUNT}). On SQLite the one delivering process owns them all and spends
 * no statement on it; an `api` process owns none. Otherwise every {@link PARTITION_RENEW_MS} it says it is alive, renews
 * the leases it holds (a renewal that changes no row stops that partition at once), gives back what rendezvous hashing
 * over the live instances now gives another (once nothing of it is in flight here), and takes what it gives this one as
 * soon as the lease there is free. An attempt starts only while its partition's lease covers its deadline, record and
 * the tolerated skew ({@link covers}), so two owners never send for one user at once.
 */
export class PartitionOwnership {
  private readonly logger = new Logger('WebhookPartitions');
  private readonly mode: 'all' | 'none' | 'leased';
  private readonly leaseMs: number;
  /** An attempt's deadline, record and the tolerated skew: what a lease must outlast for an attempt to start. */
  private readonly attemptMs: number;
  private readonly held = new Map<number, Held>();
  /** Held partitions moving to another instance: nothing new starts there; given back once none of their attempts is in flight. */
  private readonly leaving = new Set<number>();
  /**
   * Partitions a take may have given this instance without its knowing (the answer was lost, or their circuits could not
   * be read): those no longer its to own are given back at its next round, not left held, unclaimed, for a whole lease.
   */
  private readonly unsure = new Set<number>();
  private listener: PartitionListener | null = null;
  private timer: ClockTimer | null = null;
  private retry: ClockTimer | null = null;
  /** A round when another instance's word that it is alive ends ({@link watchLapse}). */
  private lapse: { readonly at: number; readonly timer: ClockTimer } | null = null;
  private cycling: Promise<void> | null = null;
  private stopped = false;
  private failing = false;
  private wanted: { readonly key: string; readonly partitions: ReadonlySet<number> } | null = null;
  /** Whether this instance reaches receivers; when others do and it does not, it stands down (see {@link EgressWatch}). */
  readonly egress = new EgressWatch();
  private standingDown = false;
  /** Shutting down: alive for nobody, it takes nothing and gives each partition back once its attempts are over. */
  private departing = false;
  /** What {@link owned} answered last, until the partitions change or the earliest of their leases no longer outlasts an attempt. */
  private claimable: { readonly partitions: readonly number[]; readonly validUntil: LeaseEnd } | null = null;
  /** When the earliest lease held ends, on each clock (after each round). */
  private earliestEnd: LeaseEnd = NEVER;
  /** Circuits being kept, one write at a time and in order (a close never lands before the opening it ends). */
  private keeping: Promise<void> = Promise.resolve();
  private keepingFails = false;

  constructor(
    private readonly leases: PartitionLeases,
    private readonly clock: Clock,
    settings: DeliverySettings,
    /** This instance's name in the partitions table: unique per process start. */
    readonly holder: string = randomUUID(),
  ) {
    this.mode = settings.role === 'api' ? 'none' : leases.shared ? 'leased' : 'all';
    this.leaseMs = partitionLeaseMs(settings);
    this.attemptMs = settings.timeoutMs + LEASE_MARGIN_MS;
  }

  /** Whether it stands down (no receiver answers it while another instance's do): its partitions go to the others. */
  get isStandingDown(): boolean {
    return this.standingDown;
  }

  // Standing down or shutting down, its partitions go now: the minimum hold is for instances that stay.
  private get isGivingUp(): boolean {
    return this.standingDown || this.departing;
  }

  /** What this instance may claim now: the deliveries of the partitions whose lease outlasts an attempt starting now. */
  owned(now: number): Ownership {
    if (this.mode === 'all') return 'all';
    // First: a round it starts drops the leases that ended at once (and with them the list below, rebuilt then).
    this.noticeEnding(now);
    const leasedPast = now + this.attemptMs;
    // Asked before every claim and poll: the list is kept until the partitions change or the earliest lease in it no
    // longer outlasts an attempt.
    if (this.claimable === null || !this.lasts(this.claimable.validUntil, leasedPast)) {
      const past = this.pointAt(leasedPast);
      const partitions: number[] = [];
      const validUntil = { ...NEVER };
      for (const [partition, held] of this.held)
        if (endsAfter(held, past) && !this.leaving.has(partition)) {
          partitions.push(partition);
          keepEarliest(validUntil, held);
        }
      this.claimable = { partitions, validUntil };
    }
    return { holder: this.holder, leasedPast, partitions: this.claimable.partitions };
  }

  /**
   * What a claim starting now may take ({@link owned}); when a lease no longer outlasts an attempt (renewals failed, the
   * process was paused, or its clock jumped), after a round that renews it, or drops it and takes back what is free.
   */
  async forClaim(): Promise<Ownership> {
    if (this.mode === 'leased' && !this.lasts(this.earliestEnd, this.clock.now() + this.attemptMs)) await this.cycle();
    return this.owned(this.clock.now());
  }

  /** Whether partitions are leased through the database (several delivering processes may share it). */
  get leased(): boolean {
    return this.mode === 'leased';
  }

  /** Partitions this instance owns now (for the metrics). */
  get count(): number {
    if (this.mode === 'all') return PARTITION_COUNT;
    const now = this.pointAt(this.clock.now());
    let count = 0;
    for (const [partition, held] of this.held) if (endsAfter(held, now) && !this.leaving.has(partition)) count++;
    return count;
  }

  /** Whether an attempt for `userId` may run here until `until`: its partition is this instance's, its lease running past then. */
  covers(userId: number, until: number): boolean {
    if (this.mode !== 'leased') return this.mode === 'all';
    this.noticeEnding(this.clock.now());
    const partition = partitionOf(userId);
    const held = this.held.get(partition);
    return held !== undefined && this.lasts(held, until) && !this.leaving.has(partition);
  }

  /**
   * Whether a claim starting at `now` may take a due delivery of `userId`: its partition is held here, or a lease no
   * longer outlasts an attempt, so the claim first runs a round that may take it ({@link forClaim}).
   */
  mayClaim(userId: number, now: number): boolean {
    if (this.mode !== 'leased') return this.mode === 'all';
    return !this.lasts(this.earliestEnd, now + this.attemptMs) || this.held.has(partitionOf(userId));
  }

  /** Whether `userId`'s partition is still this instance's at `at` (its lease running then, moving away or not). */
  holds(userId: number, at: number): boolean {
    if (this.mode !== 'leased') return this.mode === 'all';
    const held = this.held.get(partitionOf(userId));
    return held !== undefined && this.lasts(held, at);
  }

  /** Whether a lease still runs at `at` (on the wall clock) by both clocks it is counted on. */
  private lasts(end: LeaseEnd, at: number): boolean {
    return endsAfter(end, this.pointAt(at));
  }

  /** `at` (on the wall clock) on both clocks, to hold many leases against. */
  private pointAt(at: number): LeaseEnd {
    return { until: at, untilMonotonic: this.clock.monotonic() + (at - this.clock.now()) };
  }

  /**
   * A lease that no longer outlasts an attempt (renewals failed, the process was paused, or its clock jumped): a round now,
   * not at the next interval, renews it or drops it and takes back what is free; either claims what is due then.
   */
  private noticeEnding(now: number): void {
    if (!this.lasts(this.earliestEnd, now + this.attemptMs) && this.cycling === null) void this.cycle();
  }

  /** Starts taking and renewing partitions; the first round runs now. */
  start(listener: PartitionListener): Promise<void> {
    this.listener = listener;
    if (this.mode !== 'leased') return Promise.resolve();
    this.timer = this.clock.setInterval(() => void this.cycle(), PARTITION_RENEW_MS);
    return this.cycle();
  }

  /**
   * One round: alive, renew, give back, take. Rounds never overlap (a round stalled in a database outage is waited for).
   * A failed round is tried again a second later, not at the next interval: it may have taken partitions whose answer was
   * lost (seed 136861), which nobody claims until a round of this instance succeeds.
   */
  cycle(): Promise<void> {
    if (this.mode !== 'leased' || this.stopped) return Promise.resolve();
    this.cycling ??= this.round()
      .catch((error: Error) => {
        if (!this.failing)
          this.logger.warn(`Partition leases not renewed (${error.message}); trying again every ${TAKE_RETRY_MS / 1000} s`);
        this.failing = true;
        this.soon();
      })
      .finally(() => {
        this.cycling = null;
      });
    return this.cycling;
  }

  /**
   * Shutdown begins: a round now says this instance is no longer alive, so the others' rendezvous takes its partitions
   * over. It takes none, gives back at once those without attempts here, and each other one as its last attempt ends
   * ({@link attemptsEnded}). Renewals go on meanwhile: they cover the attempts still running.
   */
  depart(): void {
    if (this.mode !== 'leased' || this.departing) return;
    this.departing = true;
    this.logger.log(`Partitions: leaving; giving back ${this.count} as their attempts end`);
    void (this.cycling ?? Promise.resolve()).then(() => this.cycle());
  }

  /**
   * Shutdown: no more renewals. Once this instance's attempts are over (`giveBack`), its partitions go back at once (the
   * next owner need not wait for their leases to end), and it no longer counts as alive.
   */
  async stop(giveBack: boolean): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
    this.retry?.cancel();
    this.retry = null;
    this.lapse?.timer.cancel();
    this.lapse = null;
    if (this.mode !== 'leased' || !giveBack) return;
    await this.cycling;
    const count = this.held.size;
    this.held.clear();
    this.leaving.clear();
    this.claimable = null;
    await this.keeping;
    await this.leases.leave(this.holder);
    if (count > 0) this.logger.log(`Partitions: gave back ${count} on shutdown`);
  }

  private async round(): Promise<void> {
    try {
      await this.roundOnce();
    } finally {
      this.claimable = null;
      this.earliestEnd = earliestOf(this.held.values());
    }
  }

  private async roundOnce(): Promise<void> {
    const sentAt = this.clock.now();
    const until = sentAt + this.leaseMs;
    const end: LeaseEnd = { until, untilMonotonic: this.clock.monotonic() + this.leaseMs };
    this.forgetEnded(sentAt);
    // Leases too short to start an attempt on: renewed, their partitions can be claimed again.
    const short: number[] = [];
    const attemptEnd = this.pointAt(sentAt + this.attemptMs);
    for (const [partition, held] of this.held) if (!endsAfter(held, attemptEnd)) short.push(partition);
    // Standing down or leaving, it is alive for nobody (alive until now): the others' rendezvous and its own give it none.
    let alive = await this.leases.heartbeat(this.holder, sentAt, this.isGivingUp ? sentAt : until, this.egress.answeredAt);
    const renewed = await this.leases.renew(this.holder, this.heldLeases(), sentAt, until);
    this.keepRenewed(renewed, end);
    const revived = short.some((partition) => this.held.has(partition));
    if (this.stopped) return;
    if (this.egress.standsDown(sentAt, this.holder, alive) !== this.standingDown) {
      this.standingDown = !this.standingDown;
      if (this.standingDown) {
        this.logger.warn(
          `Partitions: standing down for ${EGRESS_STAND_DOWN_MS / 1000} s: no receiver answered this instance for ${EGRESS_WINDOW_MS / 1000} s while another instance's did (this instance's network?); its ${this.count} partitions go to the others`,
        );
        alive = await this.leases.heartbeat(this.holder, sentAt, sentAt, this.egress.answeredAt);
      } else this.logger.log('Partitions: back from standing down; taking a share again');
    }
    this.watchLapse(alive);
    const wanted = this.wantedAmong(alive.map((instance) => instance.holder));
    await this.giveBack(wanted, sentAt);
    await this.releaseStrays(wanted);
    const missing: number[] = [];
    for (const partition of wanted) if (!this.held.has(partition)) missing.push(partition);
    for (const partition of missing) this.unsure.add(partition);
    const taken = missing.length > 0 ? await this.leases.take(this.holder, missing, sentAt, until) : [];
    for (const partition of missing) this.unsure.delete(partition);
    if (
      taken.length > 0 &&
      !(await this.inherit(
        taken.map((lease) => lease.partition),
        sentAt,
      ))
    )
      return;
    for (const { partition, epoch } of taken) this.held.set(partition, { epoch, ...end, since: sentAt });
    // Partitions that are this instance's to own but still another's (it is handing them over, or its lease runs out):
    // looked at again in a second, not at the next round, so their deliveries wait as little as the hand-over allows.
    if (taken.length < missing.length) this.soon();
    if (this.failing) this.logger.log('Partition leases renewed again');
    this.failing = false;
    if (taken.length > 0)
      this.logger.log(
        `Partitions: took ${taken.length} (${describe(taken.map((lease) => lease.partition))}); owns ${this.count} of ${PARTITION_COUNT}, ${alive.length} instance(s) alive`,
      );
    if (taken.length > 0 || revived) this.listener?.gained();
  }

  /**
   * Keeps an endpoint's circuit for the next owner of its user's partition (see {@link PartitionLeases.keepCircuit}): only
   * where partitions move (MySQL/MariaDB), and only while this instance holds the partition (seed 131161: a process that
   * woke past its lease handed over a stale state over the new owner's open circuit); in order, after the writes before
   * it. A failed write is logged and dropped: the next owner then counts that endpoint's failures afresh.
   */
  keepCircuit(circuit: KeptCircuit): void {
    if (this.mode !== 'leased' || !this.holds(circuit.userId, this.clock.now())) return; // the partition's owner keeps it
    const partition = partitionOf(circuit.userId);
    const lease = { partition, epoch: this.held.get(partition)!.epoch };
    this.keeping = this.keeping.then(() =>
      this.leases.keepCircuit(circuit, this.holder, lease).then(
        () => {
          this.keepingFails = false;
        },
        (error: Error) => {
          if (!this.keepingFails)
            this.logger.warn(`Circuit of user ${circuit.userId}, host ${circuit.host} not kept for the next owner (${error.message})`);
          this.keepingFails = true;
        },
      ),
    );
  }

  /**
   * Reads the circuits kept for partitions just taken and hands them to the engine before they are this instance's. When
   * the read fails they are not: the next round takes them again (a take of its own holder's partition) and reads again.
   */
  private async inherit(partitions: readonly number[], now: number): Promise<boolean> {
    try {
      await this.keeping; // this instance's own writes first: what it read back is then newer than what it remembers, or its own
      this.listener?.inherited(await this.leases.circuitsOf(partitions, now), new Set(partitions));
      return true;
    } catch (error) {
      for (const partition of partitions) this.unsure.add(partition);
      this.logger.warn(
        `Partitions: took ${partitions.length} but could not read their circuits (${(error as Error).message}); again in a second`,
      );
      this.soon();
      return false;
    }
  }

  /** Leases that ended on this clock (a pause, renewals failing) are no longer this instance's, before anything else. */
  private forgetEnded(now: number): void {
    const ended = new Set<number>();
    const point = this.pointAt(now);
    for (const [partition, held] of this.held) if (!endsAfter(held, point)) ended.add(partition);
    this.drop(ended, 'lease ended');
  }

  private keepRenewed(renewed: readonly PartitionLease[], end: LeaseEnd): void {
    let kept = 0;
    for (const { partition } of renewed) {
      const held = this.held.get(partition);
      if (held) {
        held.until = end.until;
        held.untilMonotonic = end.untilMonotonic;
        kept++;
      }
    }
    if (kept === this.held.size) return;
    const renewedPartitions = new Set(renewed.map((lease) => lease.partition));
    this.drop(new Set([...this.held.keys()].filter((partition) => !renewedPartitions.has(partition))), 'taken by another instance');
  }

  /** Partitions that live instances' rendezvous now gives another: nothing new starts there; each goes back once idle here. */
  private async giveBack(wanted: ReadonlySet<number>, now: number): Promise<void> {
    const moving = new Set<number>();
    for (const [partition, held] of this.held)
      if (!wanted.has(partition) && !this.leaving.has(partition) && (this.isGivingUp || now >= held.since + PARTITION_MIN_HOLD_MS))
        moving.add(partition);
    for (const partition of moving) this.leaving.add(partition);
    if (moving.size > 0) {
      this.claimable = null;
      this.listener?.lost(moving);
    }
    await this.release([...this.leaving].filter((partition) => (this.listener?.inFlight(partition) ?? 0) === 0));
  }

  /**
   * The last attempt of a partition moving away ended (its answer told to the circuit): the engine hands over what it
   * still knew of the partition's endpoints, then the partition goes back, now, not at the next round, so the instance
   * taking it over waits as little as it can (nothing new starts here meanwhile).
   */
  attemptsEnded(partition: number): void {
    if (!this.leaving.has(partition) || this.stopped) return;
    this.listener?.lost(new Set([partition]));
    void this.release([partition]).catch((error: Error) =>
      this.logger.warn(`Partitions: not given back (${error.message}); at the next round`),
    );
  }

  private async release(partitions: readonly number[]): Promise<void> {
    if (partitions.length === 0) return;
    await this.keeping; // what the next owner inherits is written before it can take the partitions
    await this.leases.release(this.holder, partitions);
    for (const partition of partitions) {
      this.held.delete(partition);
      this.leaving.delete(partition);
    }
    this.logger.log(
      `Partitions: gave back ${partitions.length} (${describe(partitions)}) to other instances; owns ${this.count} of ${PARTITION_COUNT}`,
    );
  }

  /**
   * Another instance that stopped saying it is alive (killed, paused, cut off from the database) and whose word ends
   * before this instance's next round: a round runs as it ends, so the share of its partitions that rendezvous now gives
   * this one is taken at once (their leases end with it), not up to a renewal interval later.
   */
  private watchLapse(alive: readonly AliveInstance[]): void {
    const now = this.clock.now();
    let at = Number.POSITIVE_INFINITY;
    for (const other of alive)
      if (other.holder !== this.holder && other.aliveUntil < now + PARTITION_RENEW_MS) at = Math.min(at, other.aliveUntil + 1);
    if (at === Number.POSITIVE_INFINITY || (this.lapse !== null && this.lapse.at <= at)) return;
    this.lapse?.timer.cancel();
    this.armLapse(at);
  }

  /** A round at `at` (by the clock), after the round in flight, if any. */
  private armLapse(at: number): void {
    const timer = this.clock.setTimeoutAt(() => {
      this.lapse = null;
      void (this.cycling ?? Promise.resolve()).then(() => this.cycle());
    }, at);
    this.lapse = { at, timer };
  }

  /**
   * Gives back what a take whose answer was lost may have given this instance and rendezvous now gives another (seed
   * 142534: an instance's first take, alone, took all 256; a second instance joined before its next round, which took
   * only its share; the rest stayed held in the table, by nobody that claims, until the lease ended 27 s later). Nothing
   * of them started here: only partitions it knows it holds are claimed.
   */
  private async releaseStrays(wanted: ReadonlySet<number>): Promise<void> {
    const strays = [...this.unsure].filter((partition) => !wanted.has(partition) && !this.held.has(partition));
    if (strays.length > 0) await this.leases.release(this.holder, strays);
    this.unsure.clear();
  }

  /** One more round {@link TAKE_RETRY_MS} from now (one pending at a time). */
  private soon(): void {
    if (this.retry !== null || this.stopped) return;
    this.retry = this.clock.setTimeout(() => {
      this.retry = null;
      void this.cycle();
    }, TAKE_RETRY_MS);
  }

  private drop(partitions: ReadonlySet<number>, why: string): void {
    if (partitions.size === 0) return;
    this.claimable = null;
    for (const partition of partitions) {
      this.held.delete(partition);
      this.leaving.delete(partition);
    }
    this.listener?.lost(partitions);
    this.logger.warn(`Partitions: lost ${partitions.size} (${describe([...partitions])}): ${why}`);
  }

  /** The partitions rendezvous hashing over `alive` gives this instance (the last answer kept: membership rarely changes). */
  private wantedAmong(alive: readonly string[]): ReadonlySet<number> {
    const key = [...alive].sort().join('\n');
    if (this.wanted?.key !== key) {
      const partitions = new Set<number>();
      for (let partition = 0; partition < PARTITION_COUNT; partition++)
        if (preferredHolder(alive, partition) === this.holder) partitions.add(partition);
      this.wanted = { key, partitions };
    }
    return this.wanted.partitions;
  }

  private heldLeases(): PartitionLease[] {
    const leases: PartitionLease[] = [];
    for (const [partition, { epoch }] of this.held) leases.push({ partition, epoch });
    return leases;
  }
}

/** Whether a lease ends after `point` on both clocks. */
function endsAfter(end: LeaseEnd, point: LeaseEnd): boolean {
  return end.until > point.until && end.untilMonotonic > point.untilMonotonic;
}

/** The end of the earliest of `ends` on each clock. */
function earliestOf(ends: Iterable<LeaseEnd>): LeaseEnd {
  const earliest = { ...NEVER };
  for (const end of ends) keepEarliest(earliest, end);
  return earliest;
}

/** Moves `earliest` back to `end` on each clock where `end` comes first. */
function keepEarliest(earliest: LeaseEnd, end: LeaseEnd): void {
  earliest.until = Math.min(earliest.until, end.until);
  earliest.untilMonotonic = Math.min(earliest.untilMonotonic, end.untilMonotonic);
}

/** A short list of partitions for a log line. */
function describe(partitions: readonly number[]): string {
  const sorted = [...partitions].sort((a, b) => a - b);
  return sorted.length <= 8 ? sorted.join(', ') : `${sorted.slice(0, 8).join(', ')}, …`;
}
