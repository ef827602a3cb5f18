import { Clock } from '../../src/notifications/clock/clock';

/** A clock that moves only when told to. */
export class FakeClock extends Clock {
  constructor(private current = Date.UTC(2026, 10, 22, 12, 0, 0)) {
    super();
  }

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}
