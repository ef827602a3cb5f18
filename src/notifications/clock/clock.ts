/** Where the module reads the time: tests inject a fake to walk the retry schedule without waiting. */
export abstract class Clock {
  /** Milliseconds since the Unix epoch. */
  abstract now(): number;
}

export class SystemClock extends Clock {
  now(): number {
    return Date.now();
  }
}
