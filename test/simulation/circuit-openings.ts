import type { KeptCircuit } from '../../src/notifications/delivery/partitions/kept-circuit';
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
  /** The opener's write of it failed (a database error): the next owner may not know. */
  keepFailed: boolean;
}

/**
 * The world's view of circuits as instances open them, keep them for the next owner of the user's partition, and as the
 * endpoint answers: what `circuit-inherited` checks a new owner's requests against.
 */
export class CircuitOpenings {
  private readonly openings = new Map<string, Opening>();

  /** `by` opened (or opened again) the circuit of `endpoint` at `at` until `until` (global times). */
  opened(by: Instance, endpoint: string, at: number, until: number): void {
    this.openings.set(endpoint, { by, at, until, keptAt: null, keepFailed: false });
  }

  /** `by`'s write of a circuit applied (`applied`) or failed. */
  kept(by: Instance, circuit: KeptCircuit, at: number, applied: boolean): void {
    const opening = this.openings.get(`${circuit.userId} ${circuit.host}`);
    if (!opening || opening.by !== by || circuit.state?.openUntil == null) return;
    if (circuit.state.openUntil - by.clock.skewMs !== opening.until) return;
    if (applied) opening.keptAt ??= at;
    else opening.keepFailed = true;
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
    const readAt = sender.circuitsReadAt.get(partition);
    // The cool-down's end is the opener's clock: a sender whose clock runs ahead of it ends it that much early.
    if (!opening || opening.by === sender || now >= opening.until - skewMs || readAt === undefined || readAt < opening.at) return null;
    const kept =
      opening.keptAt !== null
        ? opening.keptAt <= readAt
        : !opening.keepFailed && readAt > opening.at + KEEP_GRACE_MS && !excused(opening.by, opening.at, readAt);
    if (!kept) return null;
    return `${opening.by.name} opened its circuit until ${opening.until} (${opening.keptAt === null ? 'never kept' : `kept at ${opening.keptAt}`}); ${sender.name} read partition ${partition}'s circuits at ${readAt}`;
  }
}
