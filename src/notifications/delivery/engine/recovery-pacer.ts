import type { Lease, Placement } from './outbox-store';

/**
 * Recovered deliveries that become due per second in a process, all users together: live traffic keeps the room it
 * needs. One user's recoveries take at most {@link RECOVER_PER_USER_PER_SECOND} of them, so another user's start at once
 * beside a large one instead of behind it.
 */
export const RECOVER_PER_SECOND = 100;
/** A user's share of {@link RECOVER_PER_SECOND}: half, so two users recovering at once both keep their pace. */
export const RECOVER_PER_USER_PER_SECOND = RECOVER_PER_SECOND / 2;
/** Deliveries one recover call queues at most; a later call queues the rest (those already recovered are skipped). */
export const RECOVER_LIMIT = 10_000;

/** One second of the schedule: how many recovered deliveries fall in it, in all and per user. */
interface Second {
  total: number;
  readonly perUser: Map<number, number>;
}

/**
 * Recovery pacing: one recovery at a time in this process (it holds one connection, so live publishes keep the rest of
 * the pool; a second call of the same user sees the first one's deliveries and skips them), and where each recovered
 * delivery waits: the earliest second from now with room in both budgets, {@link RECOVER_PER_SECOND} in all and
 * {@link RECOVER_PER_USER_PER_SECOND} for its user. Claims then give each user no more than their share.
 */
export class RecoveryPacer {
  /** The recovery running in this process, if any. */
  private running: Promise<void> = Promise.resolve();
  /** The seconds (their start, epoch ms, on one grid) that recovered deliveries fall in, from the first still to come. */
  private readonly seconds = new Map<number, Second>();
  /** Where the grid of seconds starts (the first placement's `now` since the schedule was last empty). */
  private grid: number | null = null;
  /** Per user, the first second that may still have room for them (the ones before it are full for them). */
  private readonly from = new Map<number, number>();
  private lastDue = 0;

  /**
   * Runs `recover` for `userId` once the recovery running in this process has ended, with a lease taken then and the
   * placement of each delivery it recovers (by its position in the list); resolves with what `recover` resolves with.
   */
  run<T>(userId: number, lease: () => Lease, recover: (placeOf: (index: number) => Placement, lease: Lease) => Promise<T>): Promise<T> {
    const run = this.running.then(() => {
      const taken = lease();
      this.forgetPassed(taken.now);
      const placed: number[] = [];
      const placeOf = (index: number): Placement => {
        while (placed.length <= index) placed.push(this.nextSlot(userId, taken.now));
        return {
          parkUntil: placed[index],
          reason: `recovery: queued behind live traffic, due at ${new Date(placed[index]).toISOString()}`,
        };
      };
      return recover(placeOf, taken);
    });
    this.running = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** When the last delivery placed so far, of any user, becomes due. */
  get lastDueAt(): number {
    return this.lastDue;
  }

  /** When the user's next recovered delivery becomes due: the earliest second from `now` with room for it in both budgets. */
  private nextSlot(userId: number, now: number): number {
    // Seconds on one grid, so every call counts against the same budget: the one holding `now` is due at once.
    this.grid ??= now;
    const current = this.grid + Math.floor((now - this.grid) / 1000) * 1000;
    let at = Math.max(current, this.from.get(userId) ?? current);
    for (;;) {
      const second = this.seconds.get(at) ?? { total: 0, perUser: new Map<number, number>() };
      const mine = second.perUser.get(userId) ?? 0;
      if (second.total < RECOVER_PER_SECOND && mine < RECOVER_PER_USER_PER_SECOND) {
        second.total++;
        second.perUser.set(userId, mine + 1);
        this.seconds.set(at, second);
        this.from.set(userId, at);
        this.lastDue = Math.max(this.lastDue, at);
        return at;
      }
      at += 1000;
    }
  }

  // Keeps the schedule to the seconds still to come (a second that started before `now` has passed).
  private forgetPassed(now: number): void {
    for (const at of this.seconds.keys()) if (at + 1000 <= now) this.seconds.delete(at);
    for (const [userId, at] of this.from) if (at + 1000 <= now) this.from.delete(userId);
    if (this.seconds.size === 0) this.grid = null;
  }
}
