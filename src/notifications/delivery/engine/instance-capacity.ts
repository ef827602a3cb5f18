import type { Clock } from '../../clock/clock';
import { webhookKey } from '../../preferences/webhook-key';
import { type DeliverySettings, LEASE_MARGIN_MS } from '../delivery-settings';
import type { Targets } from './attempt-runner';
import type { EngineWork } from './engine-work';
import { type EndpointKey, type EndpointQueues, endpointKeyOf, type QueuedAttempt } from './endpoint-queues';
import type { NewEvent, Placement } from './outbox-store';

/** Deliveries an instance holds in memory per slot (queued or in flight): enough to ride out bursts without claims. */
export const HELD_PER_SLOT = 16;
/** Deliveries held per slot of one endpoint: a slow endpoint's queue starts well within a lease (4 × 5 s). */
export const HELD_PER_ENDPOINT_SLOT = 4;
/** Weight of the latest attempt in the moving average of attempt durations. */
const ATTEMPT_MS_WEIGHT = 0.05;

/**
 * The step each lease this instance holds is in, one at a time (as graphile-worker's local queue has modes):
 * - `claim`: being taken, by a claim, a redelivery or an enqueue (room reserved for it until the statement returns);
 * - `admit`: its webhook target being read;
 * - `acquire`: queued behind its endpoint for a slot ({@link EndpointQueues});
 * - `send`: its request in flight;
 * - `settle`: its attempt's record (made, or skipped for an open circuit) being committed, its slot free already;
 * - `release` or `cancel`: being handed back to the outbox, or ended CANCELLED (its webhook is off).
 */
export type LeaseStep = 'claim' | 'admit' | 'acquire' | 'send' | 'settle' | 'release' | 'cancel';
export const LEASE_STEPS: readonly LeaseStep[] = ['claim', 'admit', 'acquire', 'send', 'settle', 'release', 'cancel'];
/** The steps outside the endpoint queues, counted here; the queues count `acquire` and `send`. */
export type OutsideStep = Exclude<LeaseStep, 'acquire' | 'send'>;

/**
 * How much this instance can take on: its capacity (the memory bound, and no more than its slots can start within a
 * lease at the recent attempt duration), the room left once every lease it holds, in whichever {@link LeaseStep}, and
 * what enqueues are placing are counted, and the placement of new deliveries (leased here when there is room, else due
 * in the outbox), with the reservations that keep concurrent enqueues from all seeing the same room.
 */
export class InstanceCapacity {
  /** Moving average of attempt durations: how much this instance can start within a lease. Pessimistic at first. */
  private attemptMs: number;
  /** Leases held outside the queues, per step: each is still leased here until its step completes. */
  private readonly outside = new Map<OutsideStep, number>();
  private outsideCount = 0;
  /** Deliveries being leased by enqueues in progress, per endpoint and in all: counted as held until they are queued. */
  private readonly placing = new Map<EndpointKey, number>();
  private placingCount = 0;

  constructor(
    private readonly queues: EndpointQueues<QueuedAttempt>,
    private readonly settings: DeliverySettings,
    private readonly work: EngineWork,
    private readonly clock: Clock,
  ) {
    this.attemptMs = settings.timeoutMs;
  }

  /** Takes an attempt's duration into the moving average. */
  attemptTook(durationMs: number): void {
    this.attemptMs += (durationMs - this.attemptMs) * ATTEMPT_MS_WEIGHT;
  }

  /**
   * How many deliveries this instance holds at most now: its memory bound, and no more than its slots can start
   * before a lease taken now would end, at the recent attempt duration.
   */
  capacity(): number {
    const { concurrency, leaseMs, timeoutMs } = this.settings;
    const startable = Math.floor((concurrency * (leaseMs - timeoutMs - LEASE_MARGIN_MS)) / Math.max(this.attemptMs, 1));
    return Math.max(1, Math.min(this.queues.capacity, startable));
  }

  /**
   * `count` leases enter `step`, outside the queues: they count against the room until they {@link leave} it. Call it
   * synchronously, before the call that may end them awaits anything, and leave in the same turn as the next step takes
   * them (queued, or held in another step).
   */
  enter(step: OutsideStep, count: number): void {
    this.outside.set(step, (this.outside.get(step) ?? 0) + count);
    this.outsideCount += count;
  }

  leave(step: OutsideStep, count: number): void {
    this.outside.set(step, this.outside.get(step)! - count);
    this.outsideCount -= count;
  }

  /** How many leases are in each step now: room reserved for claims and enqueues in progress counts as `claim`. */
  leasesByStep(): Record<LeaseStep, number> {
    const by = Object.fromEntries(LEASE_STEPS.map((step) => [step, 0])) as Record<LeaseStep, number>;
    for (const [step, count] of this.outside) by[step] = count;
    by.claim += this.placingCount;
    by.acquire = this.queues.held - this.queues.inFlight;
    by.send = this.queues.inFlight;
    return by;
  }

  /** How many more deliveries this instance takes now. */
  room(): number {
    return this.work.stopping ? 0 : Math.max(0, this.capacity() - this.queues.held - this.outsideCount - this.placingCount);
  }

  /** Whether a claim is worth its query: a batch (or half the capacity) fits. */
  fitsBatch(): boolean {
    return this.room() >= Math.min(this.settings.batchSize, this.capacity() / 2);
  }

  /**
   * Where each new delivery starts: leased here when its partition is `owned` here and its endpoint (or its open
   * circuit, to skip it) and this instance have room, else due. The leased ones count as held (in `reservation`) until
   * {@link unreserve}.
   */
  placements(
    events: readonly NewEvent[],
    targets: Targets,
    now: number,
    reservation: Map<EndpointKey, number>,
    owned: (userId: number) => boolean,
  ): Map<string, Placement> {
    const placements = new Map<string, Placement>();
    const adding = new Map<EndpointKey, number>();
    let room = this.work.delivers ? this.room() : 0;
    for (const event of events) {
      const target = targets.get(webhookKey(event.userId, event.type))!;
      // An ordered stream's delivery waits for a claim: the one before it may not be final yet (the store holds to it too).
      if (target.ordered) {
        placements.set(event.id, 'due');
        continue;
      }
      const endpoint = endpointKeyOf(event.userId, target.url);
      const placing = (this.placing.get(endpoint) ?? 0) + (adding.get(endpoint) ?? 0);
      const admission = this.queues.admission(endpoint, now, placing);
      // An open circuit: the first attempt is due now all the same; admit() records it as skipped (spec schedule kept).
      if ((admission === 'hold' || typeof admission === 'object') && room > 0 && owned(event.userId)) {
        placements.set(event.id, 'lease');
        adding.set(endpoint, (adding.get(endpoint) ?? 0) + 1);
        room--;
      } else {
        placements.set(event.id, 'due');
      }
    }
    // Until these leased deliveries are queued, other enqueues must see them: they would all see the same room.
    for (const [endpoint, count] of adding) {
      reservation.set(endpoint, count);
      this.placing.set(endpoint, (this.placing.get(endpoint) ?? 0) + count);
      this.placingCount += count;
    }
    return placements;
  }

  /**
   * Keeps a reservation of {@link placements} until its leases end at `until` at the latest: deliveries leased inside
   * a host's transaction are this instance's from the moment it commits, which may be any time before then, so they
   * count against the room from the placement on, not only once the commit is seen. The returned function ends the
   * reservation sooner (the transaction rolled back, or whoever takes the leases over counts them in that turn); calling
   * it again does nothing. It ends when the clock reads `until`, not after that long: a clock stepped back meanwhile
   * would otherwise end it while the leases still run (seed 151687).
   */
  reserveUntil(reservation: ReadonlyMap<EndpointKey, number>, until: number): () => void {
    if (reservation.size === 0) return () => undefined;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      timer.cancel();
      this.unreserve(reservation);
    };
    const timer = this.clock.setTimeoutAt(end, until);
    return end;
  }

  unreserve(reservation: ReadonlyMap<EndpointKey, number>): void {
    for (const [endpoint, count] of reservation) {
      const left = (this.placing.get(endpoint) ?? 0) - count;
      if (left > 0) this.placing.set(endpoint, left);
      else this.placing.delete(endpoint);
      this.placingCount -= count;
    }
  }
}
