import { RECORD_BUDGET_MS } from '../../src/notifications/delivery/delivery-settings';
import {
  type AttemptRecord,
  type Claimed,
  type ClaimedDelivery,
  type ClaimFairness,
  type EndpointProbe,
  type EndpointSlot,
  type Lease,
  type NewEvent,
  OutboxStore,
  type Placement,
  type ProbeTaken,
  type PurgedBatch,
  type PurgedSlots,
  type QueueDepth,
  type RecoveryWindow,
  type SlotTaken,
} from '../../src/notifications/delivery/engine/outbox-store';
import { DeliveryStatus } from '../../src/notifications/delivery/webhook-delivery.entity';
import type { WebhookEvent } from '../../src/notifications/delivery/webhook-event.entity';
import type { InMemoryOutboxStore } from './in-memory-outbox-store';
import type { SimTime } from './sim-time';
import { type Instance, type Origin, SECOND, type SendRecord, type StoreFault } from './world-model';

/** What an instance's store tells the world, and reads of it. */
export interface StoreWorld {
  readonly time: SimTime;
  readonly store: InMemoryOutboxStore;
  readonly tokenOwner: Map<string, Instance>;
  activity: number;
  storeFault(mutates: boolean): StoreFault;
  observeStore(origin?: Origin, by?: Instance): void;
  noteClaims(instance: Instance, claims: readonly ClaimedDelivery[]): void;
  noteRecording(instance: Instance, attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[], stalled: boolean): SendRecord[];
  noteRecorded(
    attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[],
    sends: SendRecord[],
    stored: readonly boolean[] | null,
  ): void;
  noteLeasesGivenUp(claims: readonly ClaimedDelivery[]): void;
  /** These leases were handed back: their deliveries are claimable from now. */
  noteReleased(claims: readonly ClaimedDelivery[]): void;
  notePurged(eventIds: readonly string[]): void;
}

/**
 * One instance's view of the shared in-memory outbox: its calls can be slow (applied when the latency has passed),
 * stall, or fail, as the seed says; a call still waiting when the instance crashes never applies. It also tells the
 * world which leases are this instance's, what it claimed and what it recorded.
 */
export class InstanceStore extends OutboxStore {
  constructor(
    private readonly world: StoreWorld,
    private readonly instance: Instance,
  ) {
    super();
  }

  private call<T>(
    mutates: boolean,
    op: () => Promise<T>,
    before?: (fault: StoreFault) => void,
    failed?: () => void,
    origin: Origin = 'publish',
  ): Promise<T> {
    const world = this.world;
    const fault = world.storeFault(mutates);
    if (fault.stalled) this.instance.outageUntil = Math.max(this.instance.outageUntil, world.time.now + fault.latencyMs);
    if (fault.latencyMs > SECOND)
      // a stall: plain latency is at most 400 ms
      this.instance.stalledUntil = Math.max(this.instance.stalledUntil, world.time.now + fault.latencyMs);
    before?.(fault);
    const run = (): Promise<T> => {
      if (mutates) world.activity++;
      if (!this.instance.alive) return new Promise<T>(() => undefined);
      if (fault.fail) {
        failed?.();
        return Promise.reject(new Error('simulated database error'));
      }
      try {
        const result = op();
        world.observeStore(origin, this.instance);
        return result;
      } catch (error) {
        return Promise.reject(error as Error);
      }
    };
    if (fault.latencyMs === 0) return run();
    return new Promise<T>((resolve, reject) => {
      world.time.schedule(world.time.now + fault.latencyMs, () => {
        run().then(resolve, reject);
      });
    });
  }

  private lease(lease: Lease): void {
    this.world.tokenOwner.set(lease.token, this.instance);
  }

  private claims(claims: ClaimedDelivery[]): ClaimedDelivery[] {
    this.world.noteClaims(this.instance, claims);
    return claims;
  }

  enqueue(events: readonly NewEvent[], placeOf: (event: NewEvent) => Placement, lease: Lease): Promise<ClaimedDelivery[]> {
    this.lease(lease);
    return this.call(true, async () => this.claims(await this.world.store.enqueue(events, placeOf, lease)));
  }

  enqueueWithin(transaction: unknown, events: readonly NewEvent[], placeOf: (event: NewEvent) => Placement, lease: Lease): Promise<void> {
    this.lease(lease);
    return this.call(true, () => this.world.store.enqueueWithin(transaction, events, placeOf, lease));
  }

  leasedWith(lease: Lease): Promise<ClaimedDelivery[]> {
    this.lease(lease);
    return this.call(false, async () => this.claims(await this.world.store.leasedWith(lease)));
  }

  anyDue(now: number): Promise<boolean> {
    return this.call(false, () => this.world.store.anyDue(now));
  }

  recoverFailed(window: RecoveryWindow, limit: number, placeOf: (index: number) => Placement, lease: Lease): Promise<number> {
    this.lease(lease);
    return this.call(true, () => this.world.store.recoverFailed(window, limit, placeOf, lease), undefined, undefined, 'recovery');
  }

  nextLeaseExpiry(now: number): Promise<number | null> {
    return this.call(false, () => {
      this.instance.leasesReadAt = this.world.time.now;
      // What the read sees: the leases running at its `now` (ties in time are told apart by order, not by the clock).
      this.instance.leasesSeen = new Set(
        [...this.world.store.deliveries.values()]
          .filter((row) => row.lockedBy !== null && row.status === DeliveryStatus.PENDING && row.lockedUntil! >= now)
          .map((row) => row.lockedBy!),
      );
      return this.world.store.nextLeaseExpiry(now);
    });
  }

  enqueueAgain(
    event: Pick<WebhookEvent, 'id' | 'userId' | 'type'>,
    placement: Placement,
    lease: Lease,
  ): Promise<ClaimedDelivery | { readonly queued: number } | { readonly running: number } | null> {
    this.lease(lease);
    return this.call(
      true,
      async () => {
        const again = await this.world.store.enqueueAgain(event, placement, lease);
        if (again !== null && 'lockToken' in again) this.claims([again]);
        return again;
      },
      undefined,
      undefined,
      'redelivery',
    );
  }

  claimDue(limit: number, lease: Lease, fairness?: ClaimFairness): Promise<Claimed> {
    this.lease(lease);
    const startedAt = this.world.time.now; // it takes what was due then (lease.now), even when it applies later
    return this.call(true, async () => {
      this.instance.claimedAt = startedAt;
      const claimed = await this.world.store.claimDue(limit, lease, fairness);
      if (claimed.claims.length > 0) this.instance.tookAt = startedAt;
      this.claims(claimed.claims);
      return claimed;
    });
  }

  recordAttempts(attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[]): Promise<boolean[]> {
    let sends: SendRecord[] = [];
    return this.call(
      true,
      async () => {
        const stored = await this.world.store.recordAttempts(attempts);
        this.world.noteRecorded(attempts, sends, stored);
        return stored;
      },
      (fault) => {
        sends = this.world.noteRecording(this.instance, attempts, fault.stalled || fault.latencyMs > RECORD_BUDGET_MS);
      },
      () => {
        this.world.noteRecorded(attempts, sends, null);
        this.world.noteLeasesGivenUp(attempts.map(({ claim }) => claim));
      },
    );
  }

  release(claims: readonly ClaimedDelivery[]): Promise<void> {
    return this.call(
      true,
      () => {
        const released = this.world.store.release(claims); // applied at once, as every call of the in-memory store
        this.world.noteReleased(claims);
        return released;
      },
      undefined,
      () => this.world.noteLeasesGivenUp(claims),
    );
  }

  cancel(claim: ClaimedDelivery, now: number, reason: string): Promise<boolean> {
    return this.call(
      true,
      () => this.world.store.cancel(claim, now, reason),
      undefined,
      () => this.world.noteLeasesGivenUp([claim]),
    );
  }

  claimProbe(endpoint: string, now: number, until: number): Promise<ProbeTaken> {
    return this.call(true, () => this.world.store.claimProbe(endpoint, now, until));
  }

  probeEnded(probe: EndpointProbe, nextProbeAt: number | null): Promise<void> {
    return this.call(true, () => this.world.store.probeEnded(probe, nextProbeAt));
  }

  takeSlot(endpoint: string, cap: number, now: number, until: number, probing: boolean): Promise<SlotTaken> {
    return this.call(true, () => this.world.store.takeSlot(endpoint, cap, now, until, probing));
  }

  releaseSlots(slots: readonly EndpointSlot[]): Promise<void> {
    return this.call(true, () => this.world.store.releaseSlots(slots));
  }

  countFailure(endpoint: string): Promise<number> {
    return this.call(true, () => this.world.store.countFailure(endpoint));
  }

  clearFailures(endpoint: string): Promise<void> {
    return this.call(true, () => this.world.store.clearFailures(endpoint));
  }

  circuitOpened(endpoint: string, until: number): Promise<void> {
    return this.call(true, () => this.world.store.circuitOpened(endpoint, until));
  }

  queueDepth(now: number, cap: number): Promise<QueueDepth> {
    return this.call(false, () => this.world.store.queueDepth(now, cap));
  }

  purgeBatch(status: DeliveryStatus, before: number, limit: number): Promise<PurgedBatch> {
    return this.call(true, async () => {
      const events = new Set(this.world.store.events.keys());
      const batch = await this.world.store.purgeBatch(status, before, limit);
      this.world.notePurged([...events].filter((id) => !this.world.store.events.has(id)));
      return batch;
    });
  }

  purgeFreeSlots(before: number, after: string, limit: number): Promise<PurgedSlots> {
    return this.call(true, () => this.world.store.purgeFreeSlots(before, after, limit));
  }
}
