/** Over this window, an instance that reached no receiver while another reached one stands down. */
export const EGRESS_WINDOW_MS = 60_000;
/** Distinct endpoints unreachable from here within the window before the instance doubts its own network, not theirs. */
export const EGRESS_UNREACHABLE_ENDPOINTS = 3;
/** How long an instance that stood down delivers nothing before it takes its share of the partitions again. */
export const EGRESS_STAND_DOWN_MS = 60_000;

/** An instance alive in the partitions table: until when it said so, and when a receiver last answered it (its clock), if ever. */
export interface AliveInstance {
  readonly holder: string;
  readonly aliveUntil: number;
  readonly answeredAt: number | null;
}

/**
 * Whether this instance can reach receivers at all. An owner whose own network is down (it still reaches the database,
 * so it keeps renewing its leases) would open the circuit of every endpoint it owns and skip their deliveries while other
 * instances could deliver them. It stands down when, within {@link EGRESS_WINDOW_MS}, requests from here to at least
 * {@link EGRESS_UNREACHABLE_ENDPOINTS} endpoints timed out or failed to connect, none got an answer, and another live
 * instance got one: then it is this instance, not the receivers. When every instance fails alike (the receivers are down,
 * or all networks are), nobody stands down.
 */
export class EgressWatch {
  /** When a request from here last got an answer (any HTTP status), on this instance's clock. */
  private lastAnswerAt: number | null = null;
  /** Endpoint → when it was last unreachable from here, since the last answer. */
  private readonly unreachable = new Map<string, number>();
  private standingDownUntil = 0;

  /** A request from here to `endpoint` got an answer (any HTTP status), or none (it timed out, or could not connect). */
  noteRequest(endpoint: string, answered: boolean, now: number): void {
    if (answered) {
      this.lastAnswerAt = now;
      this.unreachable.clear();
    } else this.unreachable.set(endpoint, now);
  }

  /** What this instance tells the others with its heartbeat. */
  get answeredAt(): number | null {
    return this.lastAnswerAt;
  }

  /** Whether it stands down at `now` (from the first round that sees the signs, for {@link EGRESS_STAND_DOWN_MS}). */
  standsDown(now: number, holder: string, alive: readonly AliveInstance[]): boolean {
    if (now < this.standingDownUntil) return true;
    if (this.standingDownUntil > 0) {
      // Back: what failed while it stood down (its last attempts) does not count again.
      this.standingDownUntil = 0;
      this.unreachable.clear();
    }
    const since = now - EGRESS_WINDOW_MS;
    let failing = 0;
    for (const at of this.unreachable.values()) if (at > since) failing++;
    const answered = (at: number | null): boolean => at !== null && at > since;
    if (failing < EGRESS_UNREACHABLE_ENDPOINTS || answered(this.lastAnswerAt)) return false;
    if (!alive.some((other) => other.holder !== holder && answered(other.answeredAt))) return false;
    this.standingDownUntil = now + EGRESS_STAND_DOWN_MS;
    return true;
  }
}
