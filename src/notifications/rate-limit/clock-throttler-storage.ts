import type { ThrottlerStorage } from '@nestjs/throttler';
import type { Clock } from '../clock/clock';

type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

const SWEEP_INTERVAL_MS = 60_000;

interface Window {
  readonly endsAt: number;
  hits: number;
}

/**
 * In-memory fixed-window counters read from the module's clock (so tests can move time). One per
 * instance: with several instances each one counts on its own. Expired windows are swept lazily.
 */
export class ClockThrottlerStorage implements ThrottlerStorage {
  private readonly windows = new Map<string, Window>();
  private nextSweepAt = 0;

  constructor(private readonly clock: Clock) {}

  async increment(key: string, ttl: number, limit: number): Promise<ThrottlerStorageRecord> {
    const now = this.clock.now();
    this.sweep(now);
    let window = this.windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { endsAt: now + ttl, hits: 0 };
      this.windows.set(key, window);
    }
    const isBlocked = window.hits >= limit;
    if (!isBlocked) window.hits++;
    const secondsLeft = Math.max(1, Math.ceil((window.endsAt - now) / 1000));
    return {
      totalHits: isBlocked ? window.hits + 1 : window.hits,
      timeToExpire: secondsLeft,
      isBlocked,
      timeToBlockExpire: isBlocked ? secondsLeft : 0,
    };
  }

  private sweep(now: number): void {
    if (now < this.nextSweepAt) return;
    this.nextSweepAt = now + SWEEP_INTERVAL_MS;
    for (const [key, window] of this.windows) if (window.endsAt <= now) this.windows.delete(key);
  }
}
