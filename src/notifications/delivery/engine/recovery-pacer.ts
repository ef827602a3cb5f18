import type { Lease, Placement } from './outbox-store';

/** Recovered deliveries that become due per second in a process (all its recover calls together): live traffic keeps the room it needs. */
export const RECOVER_PER_SECOND = 100;
/** Deliveries one recover call queues at most; a later call queues the rest (those already recovered are skipped). */
export const RECOVER_LIMIT = 10_000;

/**
 * Recovery pacing: one recovery at a time in this process (it holds one connection, so live publishes keep the rest of
 * the pool; a second call of the same user sees the first one's deliveries and skips them), and where each recovered
 * delivery waits: {@link RECOVER_PER_SECOND} become due per second, from now on, all recover calls of the process sharing
 * one pace, so recoveries never crowd out live traffic.
 */
export class RecoveryPacer {
  /** The recovery running in this process, if any. */
  private running: Promise<void> = Promise.resolve();
  /** The second the next recovered delivery falls in, and how many fall in it already. */
  private slot = { at: 0, used: 0 };

  /**
   * Runs `recover` once the recovery running in this process has ended, with a lease taken then and the placement of
   * each delivery it recovers (by its position in the list); resolves with what `recover` resolves with.
   */
  run<T>(lease: () => Lease, recover: (placeOf: (index: number) => Placement, lease: Lease) => Promise<T>): Promise<T> {
    const run = this.running.then(() => {
      const taken = lease();
      const slots: number[] = [];
      const placeOf = (index: number): Placement => {
        while (slots.length <= index) slots.push(this.nextSlot(taken.now));
        return { parkUntil: slots[index], reason: `recovery: queued behind live traffic, due at ${new Date(slots[index]).toISOString()}` };
      };
      return recover(placeOf, taken);
    });
    this.running = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** When the last delivery placed so far becomes due. */
  get lastDueAt(): number {
    return this.slot.at;
  }

  /** When the next recovered delivery becomes due: {@link RECOVER_PER_SECOND} per second, from now on. */
  private nextSlot(now: number): number {
    if (this.slot.at < now) this.slot = { at: now, used: 0 };
    if (this.slot.used === RECOVER_PER_SECOND) this.slot = { at: this.slot.at + 1000, used: 0 };
    this.slot.used++;
    return this.slot.at;
  }
}
