import type { AttemptOutcome } from '../http/attempt-result';
import type { CircuitState } from '../partitions/kept-circuit';

export interface CircuitBreakerSettings {
  /** Unreachable attempts in a row (timeouts, connection and TLS failures) that open the circuit; 0 never opens it. */
  readonly failuresToOpen: number;
  /** How long an open circuit stays open before one probe attempt; doubled after each failed probe, up to 16 times. */
  readonly coolDownMs: number;
}

/** Outcomes that cost a slot without an answer: they count towards opening the circuit. Any answer (2xx–5xx) closes it. */
const UNREACHABLE: ReadonlySet<AttemptOutcome> = new Set(['timeout', 'connect_error', 'tls_error']);

export const MAX_COOL_DOWN_FACTOR = 16;

/** Whether an outcome counts towards opening a circuit: a timeout, or a connection or TLS failure. */
export function isUnreachable(outcome: AttemptOutcome): boolean {
  return UNREACHABLE.has(outcome);
}

/**
 * The circuit of one endpoint: closed (up to its cap in flight), open (nothing sent until `openUntil`),
 * then half-open (one probe in flight; its answer closes the circuit, its failure opens it again for longer).
 */
export class CircuitBreaker {
  private failures = 0;
  private openUntil: number | null = null;
  private coolDownMs = 0;
  /** When the last unreachable outcome was counted. */
  private lastFailureAt = 0;
  /** When the last unreachable outcome was counted here: not one this breaker inherited from the partition's last owner. */
  private lastFailureSeenAt = Number.NEGATIVE_INFINITY;
  /** When the last answer was counted (it closed the circuit). */
  private lastAnswerAt = Number.NEGATIVE_INFINITY;
  /**
   * Until when an answer learned after the partition's lease ended is remembered (the longest cool-down), though it left
   * the circuit pristine: should the partition come back, an opening kept before that answer is not inherited (seed
   * 133859).
   */
  private lateAnswerKeptUntil = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly settings: CircuitBreakerSettings,
    kept?: CircuitState,
  ) {
    if (kept)
      ({ failures: this.failures, openUntil: this.openUntil, coolDownMs: this.coolDownMs, lastFailureAt: this.lastFailureAt } = kept);
  }

  /** Whether it counted an answer at or after `time`: then it knows the endpoint answers, whatever failed before. */
  answeredSince(time: number): boolean {
    return this.lastAnswerAt >= time;
  }

  /** What this circuit remembers, to be kept for the next owner of its user's partition. */
  get state(): CircuitState {
    return { failures: this.failures, openUntil: this.openUntil, coolDownMs: this.coolDownMs, lastFailureAt: this.lastFailureAt };
  }

  /** From when forgetting this breaker changes nothing that matters (see {@link isForgettable}). */
  get forgetAfter(): number {
    return (this.openUntil ?? this.lastFailureAt) + this.settings.coolDownMs * MAX_COOL_DOWN_FACTOR;
  }

  /** How many attempts may be in flight now: `cap` when closed, 1 probe when half-open, 0 when open. */
  allowance(cap: number, now: number): number {
    if (this.openUntil === null) return cap;
    return now >= this.openUntil ? 1 : 0;
  }

  /** When the circuit lets a probe through again, or null when it is closed. */
  get reopensAt(): number | null {
    return this.openUntil;
  }

  get isOpen(): boolean {
    return this.openUntil !== null;
  }

  /** True while nothing may be sent (open, cool-down not over); false when closed or half-open. */
  isOpenAt(now: number): boolean {
    return this.openUntil !== null && now < this.openUntil;
  }

  /** True when half-open: the cool-down is over and the next attempt is the probe. */
  isHalfOpenAt(now: number): boolean {
    return this.openUntil !== null && now >= this.openUntil;
  }

  /**
   * True when forgetting this breaker changes nothing that matters: it is pristine, or its last failure (or the end of its
   * cool-down) lies longer ago than the longest cool-down, and no answer learned late is still remembered. An endpoint
   * silent for that long starts afresh.
   */
  isForgettable(now: number): boolean {
    return (this.isPristine || now >= this.forgetAfter) && now >= this.lateAnswerKeptUntil;
  }

  /** True when the circuit is closed and forgets nothing worth keeping for the partition's next owner. */
  get isPristine(): boolean {
    return this.openUntil === null && this.failures === 0;
  }

  /** True when pristine and no answer learned late is remembered: dropping the breaker loses nothing at all. */
  get remembersNothing(): boolean {
    return this.isPristine && this.lateAnswerKeptUntil === Number.NEGATIVE_INFINITY;
  }

  /** Unreachable attempts in a row counted here (0 after an answer). */
  get failuresInRow(): number {
    return this.failures;
  }

  /** Whether this instance's own attempts failed since `time` (a failure it inherited does not count). */
  failedHereSince(time: number): boolean {
    return this.lastFailureSeenAt > time;
  }

  /**
   * Counts an attempt's outcome; answers true when this outcome opened (or re-opened) the circuit. `owned`: whether the
   * partition's lease still ran as the attempt ended. When it no longer did, the partition's new owner decides from its
   * own answers: a failure learned late counts for nothing; an answer still closes the circuit and is remembered for the
   * longest cool-down (should the partition come back, this instance never skips an endpoint that answered). A late
   * answer may have come any time since the request was written (`sentAt`: the process was paused meanwhile), so it
   * counts as answered then, no later: an opening another instance kept after that time is newer (seed 132858), one kept
   * before it (the process paused before the write, seed 138296) older.
   */
  record(outcome: AttemptOutcome, now: number, owned = true, sentAt = now): boolean {
    if (!UNREACHABLE.has(outcome)) {
      this.lastAnswerAt = Math.max(this.lastAnswerAt, owned ? now : sentAt);
      this.failures = 0;
      this.openUntil = null;
      this.coolDownMs = 0;
      if (!owned) this.lateAnswerKeptUntil = now + this.settings.coolDownMs * MAX_COOL_DOWN_FACTOR;
      return false;
    }
    if (!owned) return false;
    const probing = this.openUntil !== null && now >= this.openUntil;
    if (this.openUntil !== null && !probing) return false; // in flight when it opened: it neither counts nor extends it
    this.failures++;
    this.lastFailureAt = now;
    this.lastFailureSeenAt = now;
    if (this.settings.failuresToOpen === 0 || (!probing && this.failures < this.settings.failuresToOpen)) return false;
    // A probe's failure doubles the cool-down.
    this.coolDownMs = probing ? Math.min(this.coolDownMs * 2, this.settings.coolDownMs * MAX_COOL_DOWN_FACTOR) : this.settings.coolDownMs;
    this.openUntil = now + this.coolDownMs;
    return true;
  }

  /** Why deliveries to this endpoint wait, for the delivery log. */
  describe(): string {
    const until = this.openUntil === null ? 'now' : new Date(this.openUntil).toISOString();
    const attempts = this.failures === 1 ? '1 attempt' : `${this.failures} attempts in a row`;
    return `endpoint unreachable (${attempts} timed out or failed to connect); circuit open, next try at ${until}`;
  }
}
