import type { AliveInstance } from './egress-watch';
import type { KeptCircuit } from './kept-circuit';

/** A partition's lease as its holder took it: the epoch counts takes, so a renewal never extends a lease taken again since. */
export interface PartitionLease {
  readonly partition: number;
  readonly epoch: number;
}

/**
 * The partitions table (`webhook_partitions`: partition, holder, lease end, epoch), the instances that deliver
 * (`webhook_delivery_instances`: holder, alive until) and what moves with a partition (`webhook_endpoint_circuits`), as
 * {@link PartitionOwnership} uses them: a handful of statements per instance every few seconds, none per delivery. Times are the caller's clock (epoch ms). An abstract class so that it
 * is a Nest DI token; the SQL store and the simulation's in-memory store implement it.
 */
export abstract class PartitionLeases {
  /**
   * Whether several processes may deliver from this database (MySQL/MariaDB). When false (SQLite), the one delivering
   * process owns every partition and spends no statement on it.
   */
  abstract readonly shared: boolean;

  /**
   * `holder` delivers until `until` (`now`: no longer), a receiver last answered it at `answeredAt`; answers the holders
   * alive at `now`, itself included, by name, each with until when it said so and its `answeredAt`. Forgets holders long
   * gone.
   */
  abstract heartbeat(holder: string, now: number, until: number, answeredAt: number | null): Promise<AliveInstance[]>;

  /** Where the live holder of each partition held at `now` can be woken, for those that say (`delivery.wakeUrl`). */
  abstract wakeUrls(now: number): Promise<ReadonlyMap<number, string>>;

  /** Extends to `until` those of `held` that `holder` still holds, same epoch, with the lease running at `now`; answers those. */
  abstract renew(holder: string, held: readonly PartitionLease[], now: number, until: number): Promise<PartitionLease[]>;

  /**
   * Takes those of `partitions` that are free at `now` (never held, given back, or the lease ended) or held by `holder`
   * already (a take whose answer was lost), each with a new epoch, until `until`; answers those taken.
   */
  abstract take(holder: string, partitions: readonly number[], now: number, until: number): Promise<PartitionLease[]>;

  /** Gives back those of `partitions` that `holder` holds: free at once for the next taker. */
  abstract release(holder: string, partitions: readonly number[]): Promise<void>;

  /** `holder` stops delivering: its partitions are given back and it no longer counts as alive. */
  abstract leave(holder: string): Promise<void>;

  /**
   * Keeps an endpoint's circuit (`state` null: forgets it) for the next owner of its user's partition. Written as a
   * circuit opens, opens again or closes, and as a partition moves away while an endpoint still fails: never per attempt.
   * Only its partition's owner writes: the write changes nothing unless `holder` still holds `lease` (same epoch), so
   * one that lands after another instance took the partition never replaces what that owner kept.
   */
  abstract keepCircuit(circuit: KeptCircuit, holder: string, lease: PartitionLease): Promise<void>;

  /** The circuits kept for the users of `partitions` that still matter at `now`; those that no longer do are forgotten. */
  abstract circuitsOf(partitions: readonly number[], now: number): Promise<KeptCircuit[]>;
}
