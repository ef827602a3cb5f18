import { Clock, type ClockTimer } from '../../src/notifications/clock/clock';
import type { Prng } from './prng';

interface Scheduled {
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
  cancelled: boolean;
}

/**
 * Simulated time: one timeline for the whole simulation, a queue of what is due when (timers, answers, slow database
 * calls), run strictly in order of time, then of scheduling. Nothing runs until the simulator advances it.
 */
export class SimTime {
  private queue: Scheduled[] = [];
  private seq = 0;

  constructor(public now: number) {}

  schedule(at: number, run: () => void): ClockTimer {
    const entry: Scheduled = { at: Math.max(at, this.now), seq: this.seq++, run, cancelled: false };
    // Binary search for the insertion point: by time, then by scheduling order.
    let low = 0;
    let high = this.queue.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      const other = this.queue[mid];
      if (other.at < entry.at || (other.at === entry.at && other.seq < entry.seq)) low = mid + 1;
      else high = mid;
    }
    this.queue.splice(low, 0, entry);
    return {
      cancel: () => {
        entry.cancelled = true;
      },
    };
  }

  /** When the next scheduled work is due, or null. */
  nextAt(): number | null {
    while (this.queue.length > 0 && this.queue[0].cancelled) this.queue.shift();
    return this.queue.length > 0 ? this.queue[0].at : null;
  }

  /** Runs the earliest work due at or before `limit` (moving the time to it); false when there is none. */
  runNext(limit: number): boolean {
    const at = this.nextAt();
    if (at === null || at > limit) return false;
    const entry = this.queue.shift()!;
    this.now = entry.at;
    entry.run();
    return true;
  }

  get pending(): number {
    return this.queue.filter((entry) => !entry.cancelled).length;
  }
}

/**
 * One instance's clock: the simulated time plus its skew (a clock running ahead or behind), and timers on the shared
 * timeline. Halting it (the instance crashed) cancels every timer it started; pausing it (a GC pause, SIGSTOP, a VM
 * migration) holds everything of the process (its timers, and the answers it receives) until the pause ends.
 */
export class SimClock extends Clock {
  private readonly timers = new Set<ClockTimer>();
  private halted = false;
  /** Until when (global time) the process is paused. */
  pausedUntil = Number.NEGATIVE_INFINITY;
  /** Each skew the clock has had, from when (global time), oldest first. */
  private readonly skews: { readonly from: number; readonly skewMs: number }[];

  constructor(
    private readonly time: SimTime,
    skewMs: number,
  ) {
    super();
    this.skews = [{ from: Number.NEGATIVE_INFINITY, skewMs }];
  }

  /** How far this clock is off the simulated time now. */
  get skewMs(): number {
    return this.skews[this.skews.length - 1].skewMs;
  }

  /** The clock jumps to be `skewMs` off from now on. */
  set skewMs(skewMs: number) {
    this.skews.push({ from: this.time.now, skewMs });
  }

  now(): number {
    return this.time.now + this.skewMs;
  }

  /**
   * The global time at which this clock read `local` (its latest such moment, up to now): a time the engine took before
   * its clock jumped converts with the skew it had then (seed 140988), up to and including the instant it jumped (seed
   * 155379: a skip stamped in that instant, before the jump, converted with the new skew came out 2.3 s early).
   */
  globalTimeOf(local: number): number {
    for (let index = this.skews.length - 1; index >= 0; index--) {
      const { from, skewMs } = this.skews[index];
      const global = local - skewMs;
      const until = index + 1 < this.skews.length ? this.skews[index + 1].from : Number.POSITIVE_INFINITY;
      if (global >= from && global <= until) return global;
    }
    return local - this.skewMs;
  }

  /** Runs `run` now, or once the pause (and any pause started meanwhile) ends; never once halted. */
  whenAwake(run: () => void): void {
    if (this.halted) return;
    if (this.time.now < this.pausedUntil) this.time.schedule(this.pausedUntil, () => this.whenAwake(run));
    else run();
  }

  override setTimeout(run: () => void, ms: number): ClockTimer {
    if (this.halted) return { cancel: () => undefined };
    let cancelled = false;
    const timer = this.time.schedule(this.time.now + Math.max(0, ms), () => {
      this.timers.delete(timer);
      this.whenAwake(() => cancelled || run());
    });
    this.timers.add(timer);
    return {
      cancel: () => {
        cancelled = true;
        timer.cancel();
        this.timers.delete(timer);
      },
    };
  }

  override setInterval(run: () => void, ms: number): ClockTimer {
    let current: ClockTimer | null = null;
    let cancelled = false;
    const arm = () => {
      current = this.setTimeout(() => {
        if (cancelled) return;
        arm();
        run();
      }, ms);
    };
    arm();
    return {
      cancel: () => {
        cancelled = true;
        current?.cancel();
      },
    };
  }

  /** The instance is gone: none of its timers fires again. */
  halt(): void {
    this.halted = true;
    for (const timer of this.timers) timer.cancel();
    this.timers.clear();
  }
}

/** The offsets of the instances' clocks: any two differ by at most `maxMs` (at most the tolerated MAX_CLOCK_SKEW_MS). */
export class ClockSkews {
  /** The largest difference between two instances' clocks so far (retry-delays allows that much). */
  seenMs = 0;
  private readonly offsets: number[] = [];

  constructor(
    private readonly random: Prng,
    readonly maxMs: number,
  ) {}

  /** An instance's clock offset: any two instances differ by at most maxMs. */
  draw(): number {
    const skew = this.random.int(-this.maxMs / 2, this.maxMs / 2);
    // Rows keep the times a clock stamped after its process is gone: every offset so far counts.
    this.offsets.push(skew);
    const offsets = this.offsets;
    this.seenMs = Math.max(this.seenMs, Math.max(...offsets) - Math.min(...offsets));
    return skew;
  }
}
