import type { AliveInstance } from '../../src/notifications/delivery/partitions/egress-watch';
import { type PartitionLease, PartitionLeases } from '../../src/notifications/delivery/partitions/partition-leases';
import type { KeptCircuit } from '../../src/notifications/delivery/partitions/kept-circuit';
import { PARTITION_COUNT, partitionOf } from '../../src/notifications/delivery/partitions/partitions';

const byPartition = (a: PartitionLease, b: PartitionLease): number => a.partition - b.partition;
const byHolder = (a: AliveInstance, b: AliveInstance): number => (a.holder < b.holder ? -1 : a.holder > b.holder ? 1 : 0);

/** An instance whose heartbeat ended this long ago is forgotten, as the SQL store does. */
const FORGET_AFTER_MS = 60 * 60_000;

export interface PartitionRow {
  holder: string | null;
  leaseUntil: number;
  epoch: number;
}

/**
 * The partitions table (`webhook_partitions`) and the instances alive (`webhook_delivery_instances`) in memory, with
 * the SQL store's semantics (test/delivery/partition-leases-conformance.e2e-spec.ts holds both to the same cases). Shared, as
 * on MySQL/MariaDB: the simulation runs several instances. Every call is atomic. The rows are public for the simulator
 * to look at, and for {@link InMemoryOutboxStore}'s claims by owner.
 */
export class InMemoryPartitionLeases extends PartitionLeases {
  readonly shared = true;
  /** Partition → its lease: all of them from the start (the migration's rows), free. */
  readonly partitions = new Map<number, PartitionRow>(
    Array.from({ length: PARTITION_COUNT }, (_, partition) => [partition, { holder: null, leaseUntil: 0, epoch: 0 }]),
  );
  /** Holder → alive until, and when a receiver last answered it. */
  readonly instances = new Map<string, { aliveUntil: number; answeredAt: number | null }>();
  /** `webhook_endpoint_circuits`: `${userId} ${host}` → the circuit kept. */
  readonly circuits = new Map<string, KeptCircuit>();
  /** Partition → the last lease its holder gave back itself (a release, or leaving): not in the SQL store. */
  private readonly givenBack = new Map<number, PartitionLease & { readonly holder: string }>();

  heartbeat(holder: string, now: number, until: number, answeredAt: number | null): Promise<AliveInstance[]> {
    this.instances.set(holder, { aliveUntil: until, answeredAt });
    for (const [other, { aliveUntil }] of this.instances) if (aliveUntil < now - FORGET_AFTER_MS) this.instances.delete(other);
    const alive = [...this.instances].filter(([, instance]) => instance.aliveUntil > now);
    return Promise.resolve(alive.map(([name, { aliveUntil, answeredAt }]) => ({ holder: name, aliveUntil, answeredAt })).sort(byHolder));
  }

  renew(holder: string, held: readonly PartitionLease[], now: number, until: number): Promise<PartitionLease[]> {
    const renewed: PartitionLease[] = [];
    for (const lease of held) {
      const row = this.partitions.get(lease.partition);
      if (row?.holder !== holder || row.epoch !== lease.epoch) continue;
      if (row.leaseUntil >= now) row.leaseUntil = until;
      if (row.leaseUntil === until) renewed.push(lease);
    }
    return Promise.resolve(renewed.sort(byPartition));
  }

  take(holder: string, partitions: readonly number[], now: number, until: number): Promise<PartitionLease[]> {
    for (const partition of new Set(partitions)) {
      const row = this.partitions.get(partition);
      if (row && (row.holder === null || row.leaseUntil < now || row.holder === holder))
        Object.assign(row, { holder, leaseUntil: until, epoch: row.epoch + 1 });
    }
    return Promise.resolve(this.heldWith(holder, until, partitions));
  }

  release(holder: string, partitions: readonly number[]): Promise<void> {
    for (const partition of partitions) {
      const row = this.partitions.get(partition);
      if (row?.holder === holder) this.giveBack(partition, row);
    }
    return Promise.resolve();
  }

  leave(holder: string): Promise<void> {
    for (const [partition, row] of this.partitions) if (row.holder === holder) this.giveBack(partition, row);
    this.instances.delete(holder);
    return Promise.resolve();
  }

  private giveBack(partition: number, row: PartitionRow): void {
    this.givenBack.set(partition, { partition, epoch: row.epoch, holder: row.holder! });
    Object.assign(row, { holder: null, leaseUntil: 0 });
  }

  /** Whether `holder` gave `lease` back itself (a write under it after that comes too late for the next owner). */
  gaveBack(holder: string, lease: PartitionLease): boolean {
    const given = this.givenBack.get(lease.partition);
    return given?.holder === holder && given.epoch === lease.epoch;
  }

  keepCircuit(circuit: KeptCircuit, holder: string, lease: PartitionLease): Promise<void> {
    this.keep(circuit, holder, lease);
    return Promise.resolve();
  }

  /** {@link keepCircuit}, answering whether it wrote: false when `holder` no longer holds `lease`. */
  keep(circuit: KeptCircuit, holder: string, lease: PartitionLease): boolean {
    const row = this.partitions.get(lease.partition);
    if (row?.holder !== holder || row.epoch !== lease.epoch) return false;
    const key = `${circuit.userId} ${circuit.host}`;
    if (circuit.state) this.circuits.set(key, circuit);
    else this.circuits.delete(key);
    return true;
  }

  circuitsOf(partitions: readonly number[], now: number): Promise<KeptCircuit[]> {
    const kept: KeptCircuit[] = [];
    for (const [key, circuit] of this.circuits) {
      if (!partitions.includes(partitionOf(circuit.userId))) continue;
      if (circuit.forgetAfter <= now) this.circuits.delete(key);
      else kept.push(circuit);
    }
    return Promise.resolve(kept);
  }

  /** The simulated instances cannot be woken (no `delivery.wakeUrl`): the others leave due work to their polls. */
  wakeUrls(): Promise<ReadonlyMap<number, string>> {
    return Promise.resolve(new Map());
  }

  /** Whether `holder` holds `partition`'s lease past `leasedPast` (the claims' condition). */
  holds(holder: string, partition: number, leasedPast: number): boolean {
    const row = this.partitions.get(partition);
    return row !== undefined && row.holder === holder && row.leaseUntil > leasedPast;
  }

  /** Those of `partitions` that `holder` holds until exactly `until`, as the SQL store reads them back. */
  private heldWith(holder: string, until: number, partitions: readonly number[]): PartitionLease[] {
    const held: PartitionLease[] = [];
    const seen = new Set<number>();
    for (const partition of partitions) {
      const row = this.partitions.get(partition);
      if (row && row.holder === holder && row.leaseUntil === until && !seen.has(partition)) {
        seen.add(partition);
        held.push({ partition, epoch: row.epoch });
      }
    }
    return held.sort(byPartition);
  }
}
