import type { Prng } from './prng';
import type { SimTime } from './sim-time';

/** A time the database does not answer: every call of every instance fails fast, or hangs until it is back. */
export interface Outage {
  readonly from: number;
  readonly until: number;
  readonly kind: 'fail' | 'hang';
}

/** How likely each fault of the database is in a run (drawn once per seed). */
export interface DatabaseFaultRates {
  /** A call takes 1 to 400 ms. */
  readonly latency: number;
  /** A call fails on its own (a deadlock, a dropped connection), reads as well as writes. */
  readonly fail: number;
  /** A call applies, then its answer is lost (the connection reset after COMMIT): the caller sees an error. */
  readonly unknownOutcome: number;
  /** Per step: an outage of 0.5 to 30 s starts. */
  readonly outage: number;
}

/** What happens to one store call: when it applies (and answers), and whether the caller gets an error. */
export interface CallPlan {
  readonly latencyMs: number;
  /** `fail`: nothing applied, an error; `unknown`: applied, then an error; `ok`: applied and answered. */
  readonly outcome: 'ok' | 'fail' | 'unknown';
}

export const OUTAGE_MIN_MS = 500;
export const OUTAGE_MAX_MS = 30_000;

/** The shared database's faults: outage windows for everyone, and per call latency, failures and lost answers. */
export class DatabaseFaults {
  /** Every outage of the run, in order (the last one may be running). */
  readonly outages: Outage[] = [];

  constructor(
    private readonly time: SimTime,
    private readonly random: Prng,
    readonly rates: DatabaseFaultRates,
  ) {}

  /** The outage running now, if any. */
  current(now = this.time.now): Outage | undefined {
    const last = this.outages[this.outages.length - 1];
    return last && last.from <= now && now < last.until ? last : undefined;
  }

  /** Starts an outage now (none if one runs); the time advances to its end as a step of its own, for the accounts. */
  startOutage(): Outage | undefined {
    if (this.current()) return undefined;
    const r = this.random;
    const outage: Outage = {
      from: this.time.now,
      until: this.time.now + r.int(OUTAGE_MIN_MS, OUTAGE_MAX_MS),
      kind: r.chance(0.5) ? 'fail' : 'hang',
    };
    this.outages.push(outage);
    this.time.schedule(outage.until, () => undefined);
    return outage;
  }

  /** Whether the database was down at some time in [from, until]. */
  downDuring(from: number, until: number): boolean {
    return this.outages.some((outage) => outage.from <= until && outage.until >= from);
  }

  /** The fate of a call made now. */
  plan(): CallPlan {
    const r = this.random;
    const outage = this.current();
    if (outage?.kind === 'fail') return { latencyMs: r.int(0, 20), outcome: 'fail' };
    const latencyMs = (outage ? outage.until - this.time.now : 0) + (r.chance(this.rates.latency) ? r.int(1, 400) : 0);
    if (r.chance(this.rates.fail)) return { latencyMs, outcome: 'fail' };
    return { latencyMs, outcome: r.chance(this.rates.unknownOutcome) ? 'unknown' : 'ok' };
  }
}
