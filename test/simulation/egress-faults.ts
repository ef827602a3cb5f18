import { EGRESS_UNREACHABLE_ENDPOINTS, EGRESS_WINDOW_MS } from '../../src/notifications/delivery/partitions/egress-watch';
import { Prng } from './prng';
import type { Instance } from './world-model';

/** After the signs of its own network being down have lasted this long, an instance must own no partition (see check). */
export const STAND_DOWN_GRACE_MS = 30_000;

interface Window {
  readonly from: number;
  readonly until: number;
}

interface Request {
  readonly at: number;
  readonly endpoint: string;
  readonly answered: boolean;
}

/**
 * An instance's own network down (it still reaches the database, not the receivers: every request it sends fails to
 * connect), and the requests each instance made, to check that such an instance stands down. Drawn from a stream of their
 * own, so that a seed without these faults runs as it did before they existed.
 */
export class EgressFaults {
  private readonly random: Prng;
  /** Chance, after each step, that one delivering instance loses its network. */
  readonly rate: number;
  private readonly windows = new Map<Instance, Window[]>();
  private readonly requests = new Map<Instance, Request[]>();

  constructor(seed: number) {
    this.random = new Prng(Math.imul(seed, 0x9e3779b1) ^ 0x5eed);
    this.rate = this.random.pick([0, 0, 0, 0.01, 0.03]);
  }

  /** After a step: maybe one of `deliverers` loses its network, from `now` for 20 s to 3 min; answers it and until when. */
  maybeStart(now: number, deliverers: readonly Instance[]): { instance: Instance; until: number } | undefined {
    if (deliverers.length === 0 || !this.random.chance(this.rate)) return undefined;
    const instance = this.random.pick(deliverers);
    if (this.isDown(instance, now)) return undefined;
    const until = now + this.random.int(20_000, 180_000);
    this.windows.set(instance, [...(this.windows.get(instance) ?? []), { from: now, until }]);
    return { instance, until };
  }

  isDown(instance: Instance, at: number): boolean {
    return this.downSince(instance, at) !== null;
  }

  /** When the network outage of `instance` running at `at` began, or null when its network is up then. */
  downSince(instance: Instance, at: number): number | null {
    const window = this.windows.get(instance)?.find((w) => w.from <= at && at < w.until);
    return window?.from ?? null;
  }

  /** A request of `instance` ended at `at`: answered (any HTTP status), or not (timeout, connection failure). */
  noteRequest(instance: Instance, at: number, endpoint: string, answered: boolean): void {
    const kept = (this.requests.get(instance) ?? []).filter((request) => request.at > at - 3 * EGRESS_WINDOW_MS);
    kept.push({ at, endpoint, answered });
    this.requests.set(instance, kept);
  }

  /**
   * Whether, at `now`, `instance` has shown for {@link STAND_DOWN_GRACE_MS} every sign that its own network is down while
   * another's is not: throughout that time, within the last {@link EGRESS_WINDOW_MS}, requests to at least
   * EGRESS_UNREACHABLE_ENDPOINTS endpoints unanswered, none answered, and one of `others` answered and was not paused
   * since.
   */
  standDownDue(instance: Instance, others: readonly Instance[], now: number): boolean {
    const from = now - EGRESS_WINDOW_MS;
    const to = now - STAND_DOWN_GRACE_MS;
    const own = this.requests.get(instance) ?? [];
    const failing = new Set(own.filter((r) => !r.answered && r.at > from && r.at <= to).map((r) => r.endpoint));
    if (failing.size < EGRESS_UNREACHABLE_ENDPOINTS) return false;
    if (own.some((r) => r.answered && r.at > to - EGRESS_WINDOW_MS)) return false;
    // Another instance's answer counts once it could tell the others (its heartbeats carry when a receiver last answered
    // it): not while it was paused from then on (seed 130549: paused 80 s a second after its answer, it said nothing).
    const told = (other: Instance, at: number) => !other.pauses.some((pause) => pause.until > at && pause.from < now);
    return others.some((other) =>
      (this.requests.get(other) ?? []).some((r) => r.answered && r.at > from && r.at <= to && told(other, r.at)),
    );
  }
}
