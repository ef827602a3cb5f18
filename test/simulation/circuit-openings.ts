import type { KeptCircuit } from '../../src/notifications/delivery/partitions/kept-circuit';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import type { Instance } from './world-model';

/** How long an opening may take to be kept (its write queued behind others, each up to 400 ms) when nothing fails. */
export const KEEP_GRACE_MS = 5_000;

interface Opening {
  readonly by: Instance;
  readonly at: number;
  /** Global time: the opener's clock less its skew. */
  readonly until: number;
  /** When the opener's write of it applied (global time), if it did. */
  keptAt: number | null;
  /** Its place among the store's calls (two may apply in the same millisecond). */
  keptSeq: number;
  /** The opener's write of it failed (a database error): the next owner may not know. */
  keepFailed: boolean;
  /** The opener wrote it only after giving the partition back: as good as kept then, for the invariant, but never read. */
  keptTooLate: boolean;
}

/**
 * How a write keeping a circuit ended: it applied; it failed (a database error, or the writer's lease ended or was taken
 * meanwhile); or it came after its writer gave the partition back itself, which the engine must never do: what the next
 * owner inherits is written before it can take the partition.
 */
export type KeepOutcome = 'applied' | 'failed' | 'after-giving-back';

/**
 * The world's view of circuits as instances open them, keep them for the next owner of the user's partition, and as the
 * endpoint answers: what `circuit-inherited` checks a new owner's requests against.
 */
export class CircuitOpenings {
  private readonly openings = new Map<string, Opening>();
  /** Per instance and partition, its latest read of the partition's kept circuits: when, and its place among the calls. */
  private readonly reads = new Map<Instance, Map<number, { readonly at: number; readonly seq: number }>>();
  /** Per instance and partition, when it last gave the partition back itself, and its place among the calls. */
  private readonly givenBack = new Map<Instance, Map<number, { readonly at: number; readonly seq: number }>>();
  private seq = 0;
  /** Per instance, when a write of it keeping a circuit last failed. */
  private readonly failedKeeps = new Map<Instance, number>();

  /** `by` opened (or opened again) the circuit of `endpoint` at `at` until `until` (global times). */
  opened(by: Instance, endpoint: string, at: number, until: number): void {
    this.openings.set(endpoint, {
      by,
      at,
      until,
      keptAt: null,
      keptSeq: Number.POSITIVE_INFINITY,
      keepFailed: false,
      keptTooLate: false,
    });
  }

  /** How `by`'s write of a circuit ended at `at`. */
  kept(by: Instance, circuit: KeptCircuit, at: number, outcome: KeepOutcome): void {
    if (outcome === 'failed') this.failedKeeps.set(by, at);
    const opening = this.openings.get(`${circuit.userId} ${circuit.host}`);
    // Its opener withdrew it (it stands down: its own network may be what failed): the next owner starts afresh.
    if (opening?.by === by && circuit.state === null && outcome === 'applied') {
      this.openings.delete(`${circuit.userId} ${circuit.host}`);
      return;
    }
    if (!opening || opening.by !== by || circuit.state?.openUntil == null) return;
    if (circuit.state.openUntil - by.clock.skewMs !== opening.until) return;
    if (outcome === 'failed') opening.keepFailed = true;
    else if (outcome === 'after-giving-back') {
      // Due before the partition went back: any read after that must have seen it.
      const givenBack = this.givenBack.get(by)?.get(partitionOf(circuit.userId));
      if (givenBack && opening.keptAt === null) Object.assign(opening, { keptAt: givenBack.at, keptSeq: givenBack.seq, keptTooLate: true });
    } else if (opening.keptAt === null) Object.assign(opening, { keptAt: at, keptSeq: ++this.seq });
  }

  /** Whether a write of `by` keeping a circuit failed (a database error, or its lease gone) at or after `since`. */
  keepFailedBy(by: Instance, since: number): boolean {
    return (this.failedKeeps.get(by) ?? Number.NEGATIVE_INFINITY) >= since;
  }

  /** When `by` last read the circuits kept for `partition` (as it took it), or never. */
  readAt(by: Instance, partition: number): number {
    return this.reads.get(by)?.get(partition)?.at ?? Number.NEGATIVE_INFINITY;
  }

  /** `by` gave `partitions` back at `at`. */
  gaveBack(by: Instance, partitions: readonly number[], at: number): void {
    this.place(this.givenBack, by, partitions, at);
  }

  /** `by`'s read of the circuits kept for `partitions` applied at `at`. */
  read(by: Instance, partitions: readonly number[], at: number): void {
    this.place(this.reads, by, partitions, at);
  }

  private place(
    calls: Map<Instance, Map<number, { readonly at: number; readonly seq: number }>>,
    by: Instance,
    partitions: readonly number[],
    at: number,
  ): void {
    const byPartition = calls.get(by) ?? new Map<number, { at: number; seq: number }>();
    const seq = ++this.seq;
    for (const partition of partitions) byPartition.set(partition, { at, seq });
    calls.set(by, byPartition);
  }

  /** The endpoint answered (any HTTP status): its circuit closes wherever it is open. */
  answered(endpoint: string): void {
    this.openings.delete(endpoint);
  }

  /**
   * Why a request of `sender` to `endpoint` at `now` breaks `circuit-inherited`, or null: another instance opened its
   * circuit, which is still in its cool-down (less the clock skew between instances `skewMs`) with no answer since, and `sender` read the circuits of the user's partition
   * after that opening was kept (or after it should have been: not kept within {@link KEEP_GRACE_MS} though nothing
   * failed, as `excused` says of the opener between the opening and the read).
   */
  violation(
    sender: Instance,
    endpoint: string,
    partition: number,
    now: number,
    skewMs: number,
    excused: (opener: Instance, from: number, to: number) => boolean,
  ): string | null {
    const opening = this.openings.get(endpoint);
    const read = this.reads.get(sender)?.get(partition);
    // The cool-down's end is the opener's clock: a sender whose clock runs ahead of it ends it that much early.
    if (!opening || opening.by === sender || now >= opening.until - skewMs || read === undefined || read.at < opening.at) return null;
    const kept =
      opening.keptAt !== null
        ? opening.keptSeq < read.seq
        : !opening.keepFailed && read.at > opening.at + KEEP_GRACE_MS && !excused(opening.by, opening.at, read.at);
    if (!kept) return null;
    const how =
      opening.keptAt === null
        ? 'never kept'
        : opening.keptTooLate
          ? `written after it gave the partition back at ${opening.keptAt}`
          : `kept at ${opening.keptAt}`;
    return `${opening.by.name} opened its circuit until ${opening.until} (${how}); ${sender.name} read partition ${partition}'s circuits at ${read.at}, after that`;
  }
}
