import { Logger } from '@nestjs/common';
import { Agent, request } from 'undici';
import type { Clock } from '../../clock/clock';
import { PARTITION_RENEW_MS } from './partition-ownership';
import type { PartitionLeases } from './partition-leases';

/** A wake-up that gets no answer within this is given up: the owner's poll takes the deliveries a second later at most. */
const WAKE_TIMEOUT_MS = 2_000;
/** Failed wake-ups are logged at most this often, with how many failed since the last line. */
const WARN_EVERY_MS = 60_000;
/** Wake-ups to one instance start at least this far apart: under load, one stands for every publish of the last few ms. */
const WAKE_SPACING_MS = 25;

/**
 * Tells the owners of partitions that deliveries are due there: an instance that publishes (or redelivers) for users whose
 * partition another instance owns calls that instance's wake route (`delivery.wakeUrl`, authenticated with
 * `internalApiToken`), so the first attempt starts within milliseconds instead of at the owner's next look for due work
 * (every second). Best effort: failed wake-ups are logged at most once a minute, and the poll is still there.
 *
 * Who owns what is read from the partitions table (one statement) at most once per renewal interval; a partition that
 * moved meanwhile wakes its previous owner, which finds nothing of it to claim, and its new owner polls. Wake-ups to one
 * instance never pile up: one in flight, and one more after it if others were asked for meanwhile, each at least
 * {@link WAKE_SPACING_MS} after the one before (a lone one goes at once).
 */
export class OwnerWakeUps {
  private readonly logger = new Logger('WebhookPartitions');
  private readonly agent = new Agent({ connectTimeout: WAKE_TIMEOUT_MS, headersTimeout: WAKE_TIMEOUT_MS, bodyTimeout: WAKE_TIMEOUT_MS });
  private directory: { readonly urls: ReadonlyMap<number, string>; readonly readAt: number } | null = null;
  private reading: Promise<ReadonlyMap<number, string>> | null = null;
  /** The next wake-up to each URL (waiting for its spacing, or in flight), and whether another was asked for while in flight. */
  private readonly sending = new Map<string, { inFlight: boolean; again: boolean; done: Promise<void> }>();
  /** When the last wake-up to each URL was sent. */
  private readonly sentAt = new Map<string, number>();
  private closed = false;
  private failures = 0;
  private warnedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly leases: PartitionLeases,
    private readonly clock: Clock,
    /** The bearer token of the wake route (`internalApiToken`); null: this instance wakes nobody. */
    private readonly token: string | null,
    /** This instance's own wake URL, never called. */
    private readonly ownUrl: string | null,
  ) {}

  /**
   * Deliveries of `partitions` were left due in the outbox (committed): their owners are woken, those that can be.
   * Resolves when the wake-ups it asked for have ended; never rejects (failures are logged).
   */
  notify(partitions: ReadonlySet<number>): Promise<void> {
    if (this.token === null || !this.leases.shared || partitions.size === 0) return Promise.resolve();
    return this.urls().then(
      async (urls) => {
        const owners = new Set<string>();
        for (const partition of partitions) {
          const url = urls.get(partition);
          if (url !== undefined && url !== this.ownUrl) owners.add(url);
        }
        await Promise.all([...owners].map((url) => this.wake(url)));
      },
      (error: Error) => this.failed(`the partitions' owners could not be read (${error.message})`),
    );
  }

  /** Resolves when the wake-ups in flight have ended. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.sending.values()].map((entry) => entry.done));
    await this.agent.close();
  }

  private urls(): Promise<ReadonlyMap<number, string>> {
    const now = this.clock.now();
    if (this.directory !== null && now - this.directory.readAt < PARTITION_RENEW_MS) return Promise.resolve(this.directory.urls);
    this.reading ??= this.leases
      .wakeUrls(now)
      .then((urls) => {
        this.directory = { urls, readAt: now };
        return urls;
      })
      .finally(() => {
        this.reading = null;
      });
    return this.reading;
  }

  /** Resolves when the wake-up that covers this call (the one not yet sent, or the one after the one in flight) has ended. */
  private wake(url: string): Promise<void> {
    const next = this.sending.get(url);
    if (next && !next.inFlight) return next.done;
    if (next) {
      next.again = true;
      return next.done.then(() => this.sending.get(url)?.done);
    }
    const entry = { inFlight: false, again: false, done: Promise.resolve() };
    const wait = (this.sentAt.get(url) ?? Number.NEGATIVE_INFINITY) + WAKE_SPACING_MS - this.clock.now();
    entry.done = this.spaced(wait)
      .then(() => {
        entry.inFlight = true;
        this.sentAt.set(url, this.clock.now());
        return this.closed ? undefined : this.send(url);
      })
      .finally(() => {
        this.sending.delete(url);
        if (entry.again && !this.closed) void this.wake(url);
      });
    this.sending.set(url, entry);
    return entry.done;
  }

  private spaced(ms: number): Promise<void> {
    return ms <= 0 || this.closed ? Promise.resolve() : new Promise((resolve) => this.clock.setTimeout(resolve, ms));
  }

  private async send(url: string): Promise<void> {
    try {
      const { statusCode, body } = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: { authorization: `Bearer ${this.token}` },
      });
      await body.dump();
      if (statusCode >= 300) throw new Error(`HTTP ${statusCode}`);
    } catch (error) {
      this.failed(`${new URL(url).host} was not woken (${(error as Error).message})`);
    }
  }

  private failed(why: string): void {
    this.failures++;
    const now = this.clock.now();
    if (now - this.warnedAt < WARN_EVERY_MS) return;
    const count = this.failures > 1 ? ` (${this.failures} wake-ups failed since the last such line)` : '';
    this.logger.warn(`Wake-ups: ${why}${count}; the owners take what was published at their next look for due work (every second)`);
    this.warnedAt = now;
    this.failures = 0;
  }
}
