import { Clock } from '../notifications/clock/clock';

/** A clock that moves only when told to; pass it as the module's `clock` option. */
export class TestClock extends Clock {
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
