import type { EventType } from '../../catalog/event-catalog';
import type { AttemptOutcome } from '../http/attempt-result';
import type { CircuitState, KeptCircuit } from '../partitions/kept-circuit';
import { partitionOf } from '../partitions/partitions';
import { CircuitBreaker, type CircuitBreakerSettings } from './circuit-breaker';

/**
 * Who shares a cap: one user's URLs on one host (`host` as in the URL: name and port). Per user, so that many
 * users of one large SaaS host never starve each other; per host, so that spreading event types over several
 * URLs (paths) of the same dead host does not escape the cap.
 */
export type EndpointKey = string;

export function endpointKeyOf(userId: number, url: string): EndpointKey {
  let host: string;
  try {
    host = new URL(url).host;
  } catch {
    host = url; // the sender refuses it; it still needs a queue of its own
  }
  return endpointOn(userId, host);
}

/** The endpoint of one user's URLs on `host` (name and port, as a URL's `host`). */
export function endpointOn(userId: number, host: string): EndpointKey {
  return `${userId} ${host}`;
}

/** The host (name and port) of an endpoint key, for logs and events: never the URL's path, which may carry a token. */
export function hostOf(endpoint: EndpointKey): string {
  return endpoint.slice(endpoint.indexOf(' ') + 1);
}

export interface EndpointLimits {
  /** Attempts in flight at once in this instance, all endpoints together. */
  readonly concurrency: number;
  /** Attempts in flight at once to one endpoint. */
  readonly perEndpoint: number;
  /** Deliveries held in memory (queued or in flight) for one endpoint; beyond it they wait in the outbox. */
  readonly heldPerEndpoint: number;
  /** Deliveries held in memory, all endpoints together. */
  readonly held: number;
  readonly circuitBreaker: CircuitBreakerSettings;
}

export interface QueuedAttempt {
  readonly endpoint: EndpointKey;
  readonly userId: number;
  readonly type: EventType;
}

/**
 * A circuit an attempt opened (or a probe taken elsewhere): the queued attempts it parks and until when. The engine's
 * own; hosts are told through `DeliveryEvents` (its `CircuitOpened`).
 */
export interface OpenedCircuit<T> {
  readonly endpoint: EndpointKey;
  readonly userId: number;
  readonly types: readonly EventType[];
  readonly until: number;
  readonly reason: string;
  readonly parked: T[];
}

class Endpoint<T> {
  readonly queue: T[] = [];
  readonly types = new Set<EventType>();
  inFlight = 0;

  constructor(
    readonly key: EndpointKey,
    readonly userId: number,
    /** Replaced only by {@link EndpointQueues.inherit}: what the partition's last owner kept is newer. */
    public breaker: CircuitBreaker,
  ) {}

  get held(): number {
    return this.queue.length + this.inFlight;
  }
}

/**
 * The fair share of one instance's attempts, in memory and free of I/O: one queue per endpoint, served round-robin,
 * at most `perEndpoint` in flight to each and `concurrency` in all, with a circuit breaker per endpoint. A saturated
 * endpoint waits in its own queue, never in front of another endpoint's attempt.
 */
export class EndpointQueues<T extends QueuedAttempt> {
  private readonly endpoints = new Map<EndpointKey, Endpoint<T>>();
  /** Endpoints with a queued attempt they may start now, in round-robin order. */
  private readonly ready = new Set<Endpoint<T>>();
  /** Endpoints holding nothing whose breaker is still remembered: forgotten once that state no longer matters. */
  private readonly idle = new Set<Endpoint<T>>();
  private running = 0;
  private heldCount = 0;

  /**
   * `keep`, when given, hears each circuit as it opens, opens again, closes, or leaves with its user's partition still
   * failing: what the next owner of the partition starts from ({@link inherit}).
   */
  constructor(
    private readonly limits: EndpointLimits,
    private readonly keep?: (circuit: KeptCircuit) => void,
  ) {}

  /** Attempts queued or in flight. */
  get held(): number {
    return this.heldCount;
  }

  get inFlight(): number {
    return this.running;
  }

  /** How many attempts this instance holds at most. */
  get capacity(): number {
    return this.limits.held;
  }

  /** How many more attempts this instance can hold now. */
  get room(): number {
    return Math.max(0, this.limits.held - this.heldCount);
  }

  /**
   * Where a new attempt to `endpoint` should go, with `adding` more about to be pushed to it: `hold` (queue it here),
   * `outbox` (the endpoint holds its whole share: leave it due in the outbox), or parked until its open circuit lets a
   * probe through.
   */
  admission(endpoint: EndpointKey, now: number, adding = 0): 'hold' | 'outbox' | { parkUntil: number; reason: string } {
    const known = this.endpoints.get(endpoint);
    if (known?.breaker.isOpen && known.breaker.allowance(1, now) === 0)
      return { parkUntil: known.breaker.reopensAt!, reason: known.breaker.describe() };
    return (known?.held ?? 0) + adding >= this.limits.heldPerEndpoint ? 'outbox' : 'hold';
  }

  /** Queues an attempt; start it when {@link next} hands it out. */
  push(attempt: T): void {
    const endpoint = this.endpointOf(attempt);
    endpoint.queue.push(attempt);
    endpoint.types.add(attempt.type);
    this.heldCount++;
    this.ready.add(endpoint);
  }

  /** The next attempt to start, round-robin over the endpoints that may start one; null when none may. */
  next(now: number): T | null {
    if (this.running >= this.limits.concurrency) return null;
    for (const endpoint of this.ready) {
      this.ready.delete(endpoint);
      const allowance = endpoint.breaker.allowance(this.limits.perEndpoint, now);
      if (endpoint.queue.length === 0 || endpoint.inFlight >= allowance) continue;
      const attempt = endpoint.queue.shift()!;
      endpoint.inFlight++;
      this.running++;
      if (endpoint.queue.length > 0 && endpoint.inFlight < allowance) this.ready.add(endpoint);
      return attempt;
    }
    return null;
  }

  /**
   * An attempt handed out by {@link next} ended with `outcome`. `owned`: whether its partition's lease still ran as it
   * ended (not when the process was paused, or could not renew), and `sentAt` when its request was written: see
   * {@link CircuitBreaker.record}.
   */
  finished(attempt: T, outcome: AttemptOutcome, now: number, owned = true, sentAt = now): OpenedCircuit<T> | null {
    const endpoint = this.endpoints.get(attempt.endpoint)!;
    endpoint.inFlight--;
    this.running--;
    this.heldCount--;
    const wasOpen = endpoint.breaker.isOpen;
    const opened = endpoint.breaker.record(outcome, now, owned, sentAt) ? this.park(endpoint) : null;
    if (opened || (wasOpen && !endpoint.breaker.isOpen)) this.keepCircuit(endpoint);
    this.settle(endpoint);
    return opened;
  }

  /**
   * Circuits kept for `partitions`, just taken (the writes of this instance's own before the read): what their last
   * owners knew. An endpoint this instance does not know starts from its kept state (open until its time, then one probe;
   * failures in a row still counted). One it still knows (attempts in flight as it lost the partition) takes the kept
   * state unless one of those attempts got an answer since the kept state's last failure, and is closed when none is kept (its last owner closed it, or it
   * failed too long ago to matter). Answers the earliest time one of them lets a probe through, or null.
   */
  inherit(circuits: readonly KeptCircuit[], partitions: ReadonlySet<number>, now: number): number | null {
    const kept = new Map<EndpointKey, { readonly userId: number; readonly state: CircuitState }>();
    for (const { userId, host, state } of circuits) if (state) kept.set(endpointOn(userId, host), { userId, state });
    for (const endpoint of this.endpoints.values())
      if (partitions.has(partitionOf(endpoint.userId)) && !kept.has(endpoint.key) && !endpoint.breaker.isPristine)
        this.replaceBreaker(endpoint, new CircuitBreaker(this.limits.circuitBreaker));
    let reopening: number | null = null;
    for (const [key, { userId, state }] of kept) {
      let breaker = new CircuitBreaker(this.limits.circuitBreaker, state);
      if (breaker.isForgettable(now)) breaker = new CircuitBreaker(this.limits.circuitBreaker);
      const known = this.endpoints.get(key);
      if (known && known.breaker.answeredSince(state.lastFailureAt)) breaker = known.breaker;
      else if (known) this.replaceBreaker(known, breaker);
      else if (!breaker.isPristine) {
        const endpoint = new Endpoint<T>(key, userId, breaker);
        this.endpoints.set(key, endpoint);
        this.settle(endpoint);
      }
      const at = breaker.reopensAt;
      if (at !== null && (reopening === null || at < reopening)) reopening = at;
    }
    return reopening;
  }

  private replaceBreaker(endpoint: Endpoint<T>, breaker: CircuitBreaker): void {
    endpoint.breaker = breaker;
    this.settle(endpoint);
  }

  /** True when the endpoint's circuit is half-open: the attempt {@link next} hands out for it is the probe, the one request it lets through. */
  isHalfOpen(endpoint: EndpointKey, now: number): boolean {
    return this.endpoints.get(endpoint)?.breaker.isHalfOpenAt(now) ?? false;
  }

  /** An attempt handed out by {@link next} was not made after all (lease ending, webhook disabled…). */
  dropped(attempt: T): void {
    const endpoint = this.endpoints.get(attempt.endpoint)!;
    endpoint.inFlight--;
    this.running--;
    this.heldCount--;
    this.settle(endpoint);
  }

  /**
   * The users' partitions moved to another instance: takes out their queued attempts (the caller hands them back) and
   * forgets their endpoints' circuits once nothing of theirs is in flight (one still failing is kept for the new owner
   * first; an open one was kept as it opened): the new owner's decide from now on. Called again for a partition whose
   * last attempt here ended, before it goes back: what those attempts taught is handed over too. An instance that hands
   * over because no receiver answers it (`failedAlone`: the time of its last answer) withdraws what its own attempts
   * failed since that answer, open or not: its own network may be what failed, and the new owner must not skip an
   * endpoint that answers others. An opening it inherited stays kept: another instance saw it (seed 138105).
   */
  handOver(users: (userId: number) => boolean, failedAlone: number | null = null): T[] {
    const endpoints = [...this.endpoints.values()].filter((endpoint) => users(endpoint.userId));
    const taken = this.take(endpoints, () => true);
    for (const endpoint of endpoints) {
      if (endpoint.inFlight > 0) continue;
      const { breaker } = endpoint;
      if (failedAlone !== null && !breaker.isPristine && breaker.failedHereSince(failedAlone))
        this.keep?.({ userId: endpoint.userId, host: hostOf(endpoint.key), state: null, forgetAfter: 0 });
      else if (breaker.failuresInRow > 0 && !breaker.isOpen) this.keepCircuit(endpoint); // open: kept as it opened
      this.endpoints.delete(endpoint.key);
      this.idle.delete(endpoint);
    }
    return taken;
  }

  /** Takes every queued attempt out (shutdown): the caller hands them back to the outbox. */
  takeQueued(): T[] {
    return this.take([...this.endpoints.values()], () => true);
  }

  private take(endpoints: readonly Endpoint<T>[], chosen: (attempt: T) => boolean): T[] {
    const taken: T[] = [];
    for (const endpoint of endpoints) {
      const kept: T[] = [];
      for (const attempt of endpoint.queue) (chosen(attempt) ? taken : kept).push(attempt);
      if (kept.length === endpoint.queue.length) continue;
      endpoint.queue.splice(0, endpoint.queue.length, ...kept);
      if (kept.length === 0) this.ready.delete(endpoint);
      this.settle(endpoint);
    }
    this.heldCount -= taken.length;
    return taken;
  }

  /** Attempts held (queued or in flight) per user, over all their endpoints. */
  heldByUser(): Map<number, number> {
    const held = new Map<number, number>();
    for (const endpoint of this.endpoints.values()) held.set(endpoint.userId, (held.get(endpoint.userId) ?? 0) + endpoint.held);
    return held;
  }

  /** Endpoints whose circuit is open (cool-down not over) or probing (half-open with its probe in flight) at `now`. */
  openCircuits(now: number): number {
    this.forgetIdle(now);
    let open = 0;
    for (const endpoint of this.endpoints.values())
      if (endpoint.breaker.isOpenAt(now) || (endpoint.breaker.isOpen && endpoint.inFlight > 0)) open++;
    return open;
  }

  /** Endpoints this instance remembers (holding attempts, or a breaker state that still matters). */
  get known(): number {
    return this.endpoints.size;
  }

  /** The earliest time after `now` at which an open circuit lets a probe through, or null when none is open. */
  nextReopening(now: number): number | null {
    let earliest: number | null = null;
    for (const endpoint of this.endpoints.values()) {
      const at = endpoint.breaker.reopensAt;
      if (at !== null && at > now && (earliest === null || at < earliest)) earliest = at;
    }
    return earliest;
  }

  /** Forgets the endpoints that hold nothing and whose breaker no longer matters: memory stays bounded by live endpoints. */
  forgetIdle(now: number): void {
    for (const endpoint of this.idle) {
      if (!endpoint.breaker.isForgettable(now)) continue;
      this.idle.delete(endpoint);
      this.endpoints.delete(endpoint.key);
    }
  }

  private keepCircuit(endpoint: Endpoint<T>): void {
    const { key, userId, breaker } = endpoint;
    this.keep?.({ userId, host: hostOf(key), state: breaker.isPristine ? null : breaker.state, forgetAfter: breaker.forgetAfter });
  }

  private park(endpoint: Endpoint<T>): OpenedCircuit<T> {
    const parked = endpoint.queue.splice(0);
    this.heldCount -= parked.length;
    this.ready.delete(endpoint);
    const { key, userId, breaker } = endpoint;
    return { endpoint: key, userId, types: [...endpoint.types], until: breaker.reopensAt!, reason: breaker.describe(), parked };
  }

  private endpointOf(attempt: T): Endpoint<T> {
    let endpoint = this.endpoints.get(attempt.endpoint);
    if (!endpoint) {
      endpoint = new Endpoint<T>(attempt.endpoint, attempt.userId, new CircuitBreaker(this.limits.circuitBreaker));
      this.endpoints.set(attempt.endpoint, endpoint);
    }
    this.idle.delete(endpoint);
    return endpoint;
  }

  /** Puts the endpoint back in the round when it can start more, and forgets it when it holds nothing worth keeping. */
  private settle(endpoint: Endpoint<T>): void {
    if (endpoint.queue.length > 0) this.ready.add(endpoint);
    else if (endpoint.inFlight === 0 && endpoint.breaker.remembersNothing) {
      this.endpoints.delete(endpoint.key);
      this.idle.delete(endpoint);
    } else if (endpoint.inFlight === 0) this.idle.add(endpoint);
  }
}
