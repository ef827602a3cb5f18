/** A timer started with {@link Clock.setTimeout} or {@link Clock.setInterval}. */
export interface ClockTimer {
  /** Stops it; nothing runs after this call. */
  cancel(): void;
}

/** Where the module reads the time: tests inject a fake to walk the retry schedule without waiting. */
export abstract class Clock {
  /** Milliseconds since the Unix epoch. */
  abstract now(): number;

  /**
   * Milliseconds on a clock that only moves forward (not set by NTP or by hand), from any origin: what this process's own
   * partition leases also count on, so a wall clock stepped back cannot stretch them. A fake clock's wall time by default.
   */
  monotonic(): number {
    return this.now();
  }

  /** Runs `run` once, `ms` from now; by default on the process's timers, which never keep the process alive. */
  setTimeout(run: () => void, ms: number): ClockTimer {
    const timer = setTimeout(run, ms);
    timer.unref();
    return { cancel: () => clearTimeout(timer) };
  }

  /**
   * Runs `run` once this clock reads `at` or later. A timer measures elapsed time: one that fires before `at` (the clock
   * was stepped back meanwhile, or the timer ran early) waits again for what is left.
   */
  setTimeoutAt(run: () => void, at: number): ClockTimer {
    let timer: ClockTimer;
    const fire = () => {
      const left = at - this.now();
      if (left > 0) timer = this.setTimeout(fire, left);
      else run();
    };
    timer = this.setTimeout(fire, Math.max(0, at - this.now()));
    return { cancel: () => timer.cancel() };
  }

  /** Runs `run` every `ms` until cancelled; by default on the process's timers, which never keep the process alive. */
  setInterval(run: () => void, ms: number): ClockTimer {
    const timer = setInterval(run, ms);
    timer.unref();
    return { cancel: () => clearInterval(timer) };
  }
}

export class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }

  override monotonic(): number {
    return performance.now();
  }
}
