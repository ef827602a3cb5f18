import { Resolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import { positiveInteger } from '../common/values/positive-integer';

/** Resolves a host name to all of its A/AAAA answers. */
export type HostResolver = (hostname: string) => Promise<string[]>;

/** How webhook host names are resolved when no `resolver` is injected: c-ares, with deadlines, a cache and limits. */
export interface HostResolutionOptions {
  /**
   * DNS servers to ask (`1.1.1.1`, `10.0.0.2:5353`, `[2001:db8::1]:53`); default: those of the system (`/etc/resolv.conf`).
   * `/etc/hosts` is not read (only `localhost` and IP literals are known without DNS).
   */
  readonly servers?: readonly string[];
  /** Deadline of the lookup when a URL is saved, in ms (default 2000): beyond it the save answers 400 naming the field. */
  readonly saveTimeoutMs?: number;
  /** Lookups in flight in this process (default 64); more wait for a free slot, within their deadline. */
  readonly maxInFlight?: number;
  /** Lookups in flight for one user's saves (default 4); a save beyond it is refused at once (400), not queued. */
  readonly maxInFlightPerUser?: number;
  /** Host names whose answers are cached, each for its TTL (default 1000; least recently used dropped first). */
  readonly cacheSize?: number;
  /** The longest a cached answer is kept, whatever its TTL, in seconds (default 300). */
  readonly maxTtlSeconds?: number;
  /** How long a name found not to exist (NXDOMAIN, no A or AAAA record) is answered "not found" from the cache (default 30 s). */
  readonly notFoundTtlSeconds?: number;
}

export const DEFAULT_HOST_RESOLUTION = {
  saveTimeoutMs: 2000,
  maxInFlight: 64,
  maxInFlightPerUser: 4,
  cacheSize: 1000,
  maxTtlSeconds: 300,
  notFoundTtlSeconds: 30,
} as const;

/** One lookup's deadline, and the user it is for when known (saves). */
export interface LookupContext {
  readonly deadlineMs: number;
  readonly userId?: number;
}

/** Failures meaning "this name has no address": the name does not exist, or has no A/AAAA record. */
const NO_SUCH_NAME_CODES: ReadonlySet<string> = new Set(['ENOTFOUND', 'ENODATA', 'ENONAME', 'EAI_NODATA', 'EAI_NONAME']);

/** Failures meaning "no answer could be had": the DNS did not answer in time, failed or refused. */
const NO_ANSWER_CODES: ReadonlySet<string> = new Set([
  'EAI_AGAIN',
  'EAI_FAIL',
  'ESERVFAIL',
  'EREFUSED',
  'ETIMEOUT',
  'ECONNREFUSED',
  'ECANCELLED',
  'ELOOKUPBUSY',
]);

/** The code of a resolver error, when it is one. */
function codeOf(error: unknown): string | undefined {
  return error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : undefined;
}

/** True when the name was answered and has no address (NXDOMAIN, or no A/AAAA record). */
export function isNoSuchNameError(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && NO_SUCH_NAME_CODES.has(code);
}

/** True when no answer could be had in time (timeout, server failure, refusal, too many lookups in flight). */
export function isNoAnswerError(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && NO_ANSWER_CODES.has(code);
}

export function dnsError(code: string, hostname: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${message} (${code} ${hostname})`), { code, hostname, syscall: 'queryA' });
}

/** The least time left worth sending a query with. */
const MIN_QUERY_MS = 50;

const LOCALHOST = /(^|\.)localhost\.*$/i;
const LOOPBACK_ADDRESSES: readonly string[] = ['127.0.0.1', '::1'];

/**
 * IP literals and localhost name their addresses without DNS; null for a name that must be resolved. c-ares does not
 * read /etc/hosts, so this is where `localhost` (and its subdomains, RFC 6761) is answered.
 */
export function fixedAddressesOf(hostname: string): readonly string[] | null {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  if (isIP(host) !== 0) return [host];
  return LOCALHOST.test(host) ? LOOPBACK_ADDRESSES : null;
}

/** Rejects with ETIMEOUT when `promise` has not settled within `ms`. */
export function withDeadline<T>(promise: Promise<T>, ms: number, hostname: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(dnsError('ETIMEOUT', hostname, `no DNS answer within ${ms} ms`)), Math.max(0, ms));
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error as Error);
      },
    );
  });
}

/** Counting semaphore whose waiters give up at their deadline. */
class Slots {
  private used = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(private readonly size: number) {}

  get inUse(): number {
    return this.used;
  }

  /** Resolves once a slot is taken; rejects with ETIMEOUT (and takes none) if none frees within `ms`. */
  acquire(ms: number, hostname: string): Promise<void> {
    if (this.used < this.size) {
      this.used++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = () => {
        clearTimeout(timer);
        this.used++;
        resolve();
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(dnsError('ETIMEOUT', hostname, `no DNS lookup slot free within ${ms} ms`));
      }, ms);
      this.waiters.push(waiter);
    });
  }

  release(): void {
    this.used--;
    this.waiters.shift()?.();
  }
}

interface CachedAnswer {
  /** Empty: the name does not exist. */
  readonly addresses: readonly string[];
  readonly expiresAt: number;
}

/**
 * The default resolver of webhook host names: A and AAAA through c-ares (`dns.Resolver`, which runs on the event loop,
 * not on libuv's 4-thread pool that getaddrinfo, file system calls and database drivers share), each lookup under the
 * caller's deadline and cancelled at it; answers cached for their TTL, "not found" for `notFoundTtlSeconds` (bounded,
 * least recently used dropped); one
 * query per name in flight, shared by every caller; lookups in flight capped per process and per user.
 *
 * Deadlines run on real timers (they wait for the network); the cache ages on `now` (the module's clock).
 */
export class DnsHostResolver {
  private readonly servers: readonly string[] | undefined;
  private readonly maxPerUser: number;
  private readonly cacheSize: number;
  private readonly maxTtlMs: number;
  private readonly notFoundTtlSeconds: number;
  private readonly slots: Slots;
  private readonly cache = new Map<string, CachedAnswer>();
  private readonly inFlight = new Map<string, Promise<string[]>>();
  private readonly perUser = new Map<number, number>();

  constructor(
    options: HostResolutionOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.servers = options.servers && options.servers.length > 0 ? [...options.servers] : undefined;
    if (this.servers) new Resolver().setServers(this.servers); // throws at start on a malformed server address
    const option = (name: keyof typeof DEFAULT_HOST_RESOLUTION) =>
      positiveInteger(`hostResolution.${name}`, options[name] ?? DEFAULT_HOST_RESOLUTION[name]);
    this.maxPerUser = option('maxInFlightPerUser');
    this.cacheSize = option('cacheSize');
    this.maxTtlMs = option('maxTtlSeconds') * 1000;
    this.notFoundTtlSeconds = option('notFoundTtlSeconds');
    this.slots = new Slots(option('maxInFlight'));
  }

  /** Lookups in flight now, in this process (for tests and diagnostics). */
  get lookupsInFlight(): number {
    return this.inFlight.size;
  }

  /**
   * Every A and AAAA address of `hostname`, from the cache or the DNS. Rejects with ENOTFOUND when the name has no
   * address, ETIMEOUT when no answer came within `deadlineMs`, ELOOKUPBUSY when the user already has the most lookups
   * in flight, or the DNS's own failure (ESERVFAIL, EREFUSED…).
   */
  async resolve(hostname: string, { deadlineMs, userId }: LookupContext): Promise<string[]> {
    const fixed = fixedAddressesOf(hostname);
    if (fixed !== null) return [...fixed];
    const name = hostname.toLowerCase().replace(/\.+$/, '');
    const cached = this.cached(name);
    if (cached?.length === 0) throw dnsError('ENOTFOUND', hostname, 'host name not found');
    if (cached !== undefined) return [...cached];
    const shared = this.inFlight.get(name);
    if (shared !== undefined) return [...(await withDeadline(shared, deadlineMs, hostname))];
    if (userId !== undefined && (this.perUser.get(userId) ?? 0) >= this.maxPerUser) {
      throw dnsError('ELOOKUPBUSY', hostname, `${this.maxPerUser} host name lookups of this user are in flight already`);
    }
    const lookup = this.lookup(name, hostname, deadlineMs, userId);
    this.inFlight.set(name, lookup);
    return [...(await lookup)];
  }

  private cached(name: string): readonly string[] | undefined {
    const entry = this.cache.get(name);
    if (entry === undefined) return undefined;
    this.cache.delete(name);
    if (entry.expiresAt <= this.now()) return undefined;
    this.cache.set(name, entry); // most recently used last
    return entry.addresses;
  }

  private remember(name: string, addresses: readonly string[], ttlSeconds: number): void {
    const ttlMs = Math.min(ttlSeconds * 1000, this.maxTtlMs);
    if (ttlMs <= 0 || this.cacheSize <= 0) return;
    this.cache.delete(name);
    this.cache.set(name, { addresses, expiresAt: this.now() + ttlMs });
    while (this.cache.size > this.cacheSize) this.cache.delete(this.cache.keys().next().value!);
  }

  private async lookup(name: string, hostname: string, deadlineMs: number, userId: number | undefined): Promise<string[]> {
    const startedAt = performance.now();
    if (userId !== undefined) this.perUser.set(userId, (this.perUser.get(userId) ?? 0) + 1);
    try {
      await this.slots.acquire(deadlineMs, hostname);
      try {
        // A slot freed just before the deadline is not worth a query that would be cancelled at once.
        const remainingMs = deadlineMs - (performance.now() - startedAt);
        if (remainingMs < MIN_QUERY_MS) throw dnsError('ETIMEOUT', hostname, `no DNS lookup slot free within ${deadlineMs} ms`);
        return await this.query(name, hostname, remainingMs);
      } finally {
        this.slots.release();
      }
    } finally {
      this.inFlight.delete(name);
      if (userId !== undefined) {
        const left = (this.perUser.get(userId) ?? 1) - 1;
        if (left === 0) this.perUser.delete(userId);
        else this.perUser.set(userId, left);
      }
    }
  }

  /** A and AAAA in parallel on a resolver of this lookup's own, cancelled at the deadline (its sockets closed). */
  private async query(name: string, hostname: string, deadlineMs: number): Promise<string[]> {
    // c-ares retries with a doubling timeout: tries of ⅓ and ⅔ of the deadline end with it; the timer below is the bound.
    const resolver = new Resolver({ timeout: Math.max(50, Math.floor(deadlineMs / 3)), tries: 2 });
    if (this.servers) resolver.setServers(this.servers);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      resolver.cancel();
    }, deadlineMs);
    const [a, aaaa] = await Promise.allSettled([resolver.resolve4(name, { ttl: true }), resolver.resolve6(name, { ttl: true })]);
    clearTimeout(timer);
    const answers = [a, aaaa].flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
    // One family answered and the other did not (in time): the addresses known are the ones checked and used.
    if (answers.length > 0) {
      this.remember(
        name,
        answers.map(({ address }) => address),
        Math.min(...answers.map(({ ttl }) => ttl)),
      );
      return answers.map(({ address }) => address);
    }
    const errors = [a, aaaa].flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
    const failure = errors.find((error) => !isNoSuchNameError(error));
    if (failure === undefined) {
      this.remember(name, [], this.notFoundTtlSeconds); // as resolvers cache NXDOMAIN (RFC 2308), for a fixed time
      throw dnsError('ENOTFOUND', hostname, 'host name not found');
    }
    if (timedOut || codeOf(failure) === 'ECANCELLED' || codeOf(failure) === 'ETIMEOUT') {
      throw dnsError('ETIMEOUT', hostname, `no DNS answer within ${Math.round(deadlineMs)} ms`);
    }
    throw failure;
  }
}
