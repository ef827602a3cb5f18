import type { AliveInstance } from '../../src/notifications/delivery/partitions/egress-watch';
import type { KeptCircuit } from '../../src/notifications/delivery/partitions/kept-circuit';
import {
  type AttemptRecord,
  type Claimed,
  type ClaimedDelivery,
  type ClaimFairness,
  type Lease,
  type NewEvent,
  OutboxStore,
  type Placement,
  type RecoveryWindow,
} from '../../src/notifications/delivery/engine/outbox-store';
import { type PartitionLease, PartitionLeases } from '../../src/notifications/delivery/partitions/partition-leases';
import type { Ownership } from '../../src/notifications/delivery/partitions/partitions';
import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { DeliveryPurge, type PurgedBatch } from '../../src/notifications/retention/delivery-purge';
import type { WebhookEvent } from '../../src/notifications/delivery/entities/webhook-event.entity';
import type { KeepOutcome } from './circuit-openings';
import type { InMemoryOutboxStore, OpenClaim } from './in-memory-outbox-store';
import type { InMemoryPartitionLeases } from './in-memory-partition-leases';
import type { SimTime } from './sim-time';
import type { DatabaseFaults } from './database-faults';
import { type Instance, type Origin, SECOND, type SendRecord } from './world-model';

/** What an instance's store reads of the world, and whom it tells what it did. */
export interface StoreWorld {
  readonly time: SimTime;
  readonly store: InMemoryOutboxStore;
  readonly partitions: InMemoryPartitionLeases;
  readonly tokenOwner: Map<string, Instance>;
  activity: number;
  readonly database: DatabaseFaults;
  readonly observer: StoreNotes;
}

/** What an instance's store tells the world (store-observer.ts): what it created, claimed, recorded, released, purged. */
export interface StoreNotes {
  observeStore(origin?: Origin, by?: Instance): void;
  noteClaims(instance: Instance, claims: readonly ClaimedDelivery[]): void;
  noteRecording(instance: Instance, attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[]): SendRecord[];
  noteRecorded(
    attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[],
    sends: SendRecord[],
    stored: readonly boolean[] | null,
  ): void;
  noteLeasesGivenUp(claims: readonly Pick<ClaimedDelivery, 'id' | 'lockToken'>[]): void;
  /** These leases were handed back: their deliveries are claimable from now. */
  noteReleased(claims: readonly ClaimedDelivery[]): void;
  notePurged(eventIds: readonly string[]): void;
  /** A write of `instance` keeping a circuit for the next owner applied, failed, or came after it gave the partition back. */
  noteCircuitKept(instance: Instance, circuit: KeptCircuit, outcome: KeepOutcome): void;
  /** `instance` gave these partitions back itself (a release, or leaving at shutdown). */
  notePartitionsGivenBack(instance: Instance, partitions: readonly number[]): void;
  /** A read of `instance` of the circuits kept for `partitions` applied. */
  noteCircuitsRead(instance: Instance, partitions: readonly number[]): void;
}

/** A store call that holds locks between its first statement (`begin`) and its commit: rolled back if it never applies. */
interface OpenTransaction {
  begin(): void;
  rollBack(): void;
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

  /**
   * A call of this instance: it applies when its latency has passed (never if the instance crashed first), then fails,
   * answers, or applies and fails (its outcome unknown to the caller), as the database's faults say; the answer reaches
   * the instance when it runs (not while it is paused). `failed` hears of an error, and whether the call applied.
   */
  private call<T>(
    mutates: boolean | 'partitions',
    op: () => Promise<T>,
    failed?: (applied: boolean) => void,
    origin: Origin = 'publish',
    transaction?: OpenTransaction,
  ): Promise<T> {
    const world = this.world;
    const plan = world.database.plan();
    if (plan.latencyMs > SECOND)
      // a stall (an outage it waits out): plain latency is at most 400 ms
      this.instance.stalledUntil = Math.max(this.instance.stalledUntil, world.time.now + plan.latencyMs);
    // A transaction's first statement runs halfway through the call's latency; it commits when the call applies.
    if (transaction && plan.outcome !== 'fail' && plan.latencyMs >= 2)
      world.time.schedule(world.time.now + Math.floor(plan.latencyMs / 2), () => {
        if (this.instance.alive) transaction.begin();
      });
    return new Promise<T>((resolve, reject) => {
      const apply = () => {
        if (mutates === true) world.activity++; // the partitions table holds no delivery: nothing to check again
        if (!this.instance.alive) {
          transaction?.rollBack(); // its connection is gone: the database rolls it back
          return;
        }
        let answer: Promise<T>;
        if (plan.outcome === 'fail') {
          failed?.(false);
          answer = Promise.reject(new Error('simulated database error'));
        } else {
          try {
            answer = op();
            if (mutates !== 'partitions') world.observer.observeStore(origin, this.instance);
          } catch (error) {
            answer = Promise.reject(error as Error);
          }
          if (plan.outcome === 'unknown')
            answer = answer.then(() => {
              failed?.(true);
              throw new Error('simulated connection reset after COMMIT');
            });
        }
        answer.then(
          (value) => this.instance.clock.whenAwake(() => resolve(value)),
          (error: unknown) => this.instance.clock.whenAwake(() => reject(error as Error)),
        );
      };
      if (plan.latencyMs === 0) apply();
      else world.time.schedule(world.time.now + plan.latencyMs, apply);
    });
  }

  /** A call leasing with `lease` failed, maybe after it committed: the engine counts none of what it leased. */
  private leaseLost(lease: Lease): () => void {
    return () =>
      this.world.observer.noteLeasesGivenUp(
        [...this.world.store.deliveries.values()]
          .filter((row) => row.lockedBy === lease.token)
          .map((row) => ({ id: row.id, lockToken: lease.token })),
      );
  }

  private lease(lease: Lease): void {
    this.world.tokenOwner.set(lease.token, this.instance);
  }

  private claims(claims: ClaimedDelivery[]): ClaimedDelivery[] {
    this.world.observer.noteClaims(this.instance, claims);
    return claims;
  }

  enqueue(events: readonly NewEvent[], placeOf: (event: NewEvent) => Placement, lease: Lease): Promise<ClaimedDelivery[]> {
    this.lease(lease);
    return this.call(true, async () => this.claims(await this.world.store.enqueue(events, placeOf, lease)), this.leaseLost(lease));
  }

  enqueueWithin(transaction: unknown, events: readonly NewEvent[], placeOf: (event: NewEvent) => Placement, lease: Lease): Promise<void> {
    this.lease(lease);
    return this.call(true, () => this.world.store.enqueueWithin(transaction, events, placeOf, lease));
  }

  leasedWith(lease: Lease): Promise<ClaimedDelivery[]> {
    this.lease(lease);
    return this.call(false, async () => this.claims(await this.world.store.leasedWith(lease)));
  }

  anyDue(now: number, owned?: Ownership): Promise<boolean> {
    return this.call(false, () => this.world.store.anyDue(now, owned));
  }

  recoverFailed(window: RecoveryWindow, limit: number, placeOf: (index: number) => Placement, lease: Lease): Promise<number> {
    this.lease(lease);
    return this.call(true, () => this.world.store.recoverFailed(window, limit, placeOf, lease), this.leaseLost(lease), 'recovery');
  }

  nextLeaseExpiry(now: number): Promise<number | null> {
    return this.call(false, () => {
      this.instance.leasesReadAt = this.world.time.now;
      // What the read sees: the leases running at its `now` (ties in time are told apart by order, not by the clock).
      const seen = new Set<string>();
      for (const row of this.world.store.deliveries.values())
        if (row.lockedBy !== null && row.status === DeliveryStatus.PENDING && row.lockedUntil! >= now) seen.add(row.lockedBy);
      this.instance.leasesSeen = seen;
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
      this.leaseLost(lease),
      'redelivery',
    );
  }

  /**
   * A claim is a transaction of two statements: its locking read (halfway through the call's latency), whose rows other
   * claims skip until its UPDATE and COMMIT (when the call applies), as FOR UPDATE SKIP LOCKED does on MySQL.
   */
  claimDue(limit: number, lease: Lease, fairness?: ClaimFairness, owned?: Ownership): Promise<Claimed> {
    this.lease(lease);
    const startedAt = this.world.time.now; // it takes what was due then (lease.now), even when it applies later
    let open: OpenClaim | null = null;
    const read = () => (open ??= this.world.store.openClaim(limit, lease, fairness, owned));
    return this.call(
      true,
      () => {
        this.instance.claimedAt = startedAt;
        const claimed = read().commit();
        if (claimed.claims.length > 0) this.instance.tookAt = startedAt;
        this.claims(claimed.claims);
        return Promise.resolve(claimed);
      },
      this.leaseLost(lease),
      'publish',
      { begin: read, rollBack: () => open?.rollBack() },
    );
  }

  recordAttempts(attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[]): Promise<boolean[]> {
    const sends = this.world.observer.noteRecording(this.instance, attempts);
    return this.call(
      true,
      async () => {
        const stored = await this.world.store.recordAttempts(attempts);
        this.world.observer.noteRecorded(attempts, sends, stored);
        return stored;
      },
      (applied) => {
        if (!applied) this.world.observer.noteRecorded(attempts, sends, null);
        this.world.observer.noteLeasesGivenUp(attempts.map(({ claim }) => claim));
      },
    );
  }

  release(claims: readonly ClaimedDelivery[]): Promise<void> {
    return this.call(
      true,
      () => {
        const released = this.world.store.release(claims); // applied at once, as every call of the in-memory store
        this.world.observer.noteReleased(claims);
        return released;
      },
      () => this.world.observer.noteLeasesGivenUp(claims),
    );
  }

  cancel(claim: ClaimedDelivery, now: number, reason: string): Promise<boolean> {
    return this.call(
      true,
      () => this.world.store.cancel(claim, now, reason),
      () => this.world.observer.noteLeasesGivenUp([claim]),
    );
  }

  /** Retention's deletes as this instance makes them: as slow, stalled or failing as the database's faults say. */
  purge(): DeliveryPurge {
    const call = <T>(op: () => Promise<T>) => this.call(true, op);
    const world = this.world;
    return new (class extends DeliveryPurge {
      purgeBatch(status: DeliveryStatus, before: number, limit: number): Promise<PurgedBatch> {
        return call(async () => {
          const events = new Set(world.store.events.keys());
          const batch = await world.store.purgeBatch(status, before, limit);
          world.observer.notePurged([...events].filter((id) => !world.store.events.has(id)));
          return batch;
        });
      }
    })();
  }

  /** The partitions table as this instance sees it: every call as slow, stalled or failing as the database's faults say. */
  partitionLeases(): PartitionLeases {
    const call = <T>(op: () => Promise<T>, failed?: (applied: boolean) => void) => this.call('partitions', op, failed);
    const leases = this.world.partitions;
    const instance = this.instance;
    const world = this.world;
    /** What the instance's checks rely on from now: the lease ends the store answered. */
    const held = (until: number) => (answer: PartitionLease[]) => {
      for (const { partition } of answer) instance.partitionLeases.set(partition, until);
      return answer;
    };
    return new (class extends PartitionLeases {
      readonly shared = true;
      heartbeat(holder: string, now: number, until: number, answeredAt: number | null): Promise<AliveInstance[]> {
        return call(() => leases.heartbeat(holder, now, until, answeredAt));
      }
      renew(holder: string, leased: readonly PartitionLease[], now: number, until: number): Promise<PartitionLease[]> {
        return call(() => leases.renew(holder, leased, now, until).then(held(until)));
      }
      take(holder: string, partitions: readonly number[], now: number, until: number): Promise<PartitionLease[]> {
        return call(() => leases.take(holder, partitions, now, until).then(held(until)));
      }
      release(holder: string, partitions: readonly number[]): Promise<void> {
        return call(() => {
          world.observer.notePartitionsGivenBack(
            instance,
            partitions.filter((partition) => leases.partitions.get(partition)?.holder === holder),
          );
          return leases.release(holder, partitions);
        });
      }
      leave(holder: string): Promise<void> {
        return call(() => {
          const held = [...leases.partitions].filter(([, row]) => row.holder === holder).map(([partition]) => partition);
          world.observer.notePartitionsGivenBack(instance, held);
          return leases.leave(holder);
        });
      }
      keepCircuit(circuit: KeptCircuit, holder: string, lease: PartitionLease): Promise<void> {
        return call(
          () => {
            const kept = leases.keep(circuit, holder, lease);
            world.observer.noteCircuitKept(
              instance,
              circuit,
              kept ? 'applied' : leases.gaveBack(holder, lease) ? 'after-giving-back' : 'failed',
            );
            return Promise.resolve();
          },
          (applied) => {
            if (!applied) world.observer.noteCircuitKept(instance, circuit, 'failed');
          },
        );
      }
      wakeUrls(): Promise<ReadonlyMap<number, string>> {
        return call(() => leases.wakeUrls());
      }
      circuitsOf(partitions: readonly number[], now: number): Promise<KeptCircuit[]> {
        return call(() =>
          leases.circuitsOf(partitions, now).then((kept) => {
            world.observer.noteCircuitsRead(instance, partitions);
            return kept;
          }),
        );
      }
    })();
  }
}
