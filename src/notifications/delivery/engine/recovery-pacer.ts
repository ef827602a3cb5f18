import type { Lease, Placement } from './outbox-store';

/**
 * Recovered deliveries of one user that become due per second in a process (all that user's recover calls together):
 * live traffic keeps the room it needs, and each user's recoveries keep a pace of their own.
 */
export const RECOVER_PER_SECOND = 100;
/** Deliveries one recover call queues at most; a later call queues the rest (those already recovered are skipped). */
export const RECOVER_LIMIT = 10_000;

interface Slot {
  /** The second the user's next recovered delivery falls in. */
  at: number;
  /** How many of the user's recovered deliveries fall in it already. */
  used: number;
}

/**
 * Recovery pacing: one recovery at a time in this process (it holds one connection, so live publishes keep the rest of
 * the pool; a second call of the same user sees the first one's deliveries and skips them), and where each recovered
 * delivery waits: {@link RECOVER_PER_SECOND} of a user's become due per second, from now on. Each user has a pace of
 * their own, so one user's 10,000-delivery recovery does not push another user's recovered deliveries behind it; claims
 * then give each user no more than their share.
 */
export class RecoveryPacer {
  /** The recovery running in this process, if any. */
  private running: Promise<void> = Promise.resolve();
  /** Per user, where their next recovered delivery falls; users whose last slot has passed are forgotten. */
  private readonly slots = new Map<number, Slot>();
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

  /** When the user's next recovered delivery becomes due: {@link RECOVER_PER_SECOND} per second, from now on. */
  private nextSlot(userId: number, now: number): number {
    let slot = this.slots.get(userId);
    if (slot === undefined || slot.at < now) {
      slot = { at: now, used: 0 };
      this.slots.set(userId, slot);
    }
    if (slot.used === RECOVER_PER_SECOND) {
      slot.at += 1000;
      slot.used = 0;
    }
    slot.used++;
    this.lastDue = Math.max(this.lastDue, slot.at);
    return slot.at;
  }

  // Keeps the map to the users whose recovered deliveries are still to come due.
  private forgetPassed(now: number): void {
    for (const [userId, slot] of this.slots) if (slot.at < now) this.slots.delete(userId);
  }
}
