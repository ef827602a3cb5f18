import { Logger } from '@nestjs/common';
import { Agent, request } from 'undici';
import type { Clock } from '../../clock/clock';
import { PARTITION_RENEW_MS } from './partition-ownership';
import type { PartitionLeases } from './partition-leases';

/** A wake-up that gets no answer within this is given up: the owner's poll takes the deliveries a second later at most. */
const WAKE_TIMEOUT_MS = 2_000;
/** Failed wake-ups are logged at most this often, with how many failed since the last line. */
const WARN_EVERY_MS = 60_000;

/**
 * Tells the owners of partitions that deliveries are due there: an instance that publishes (or redelivers) for users whose
 * partition another instance owns calls that instance's wake route (`delivery.wakeUrl`, authenticated with
 * `internalApiToken`), so the first attempt starts within milliseconds instead of at the owner's next look for due work
 * (every second). Best effort: failed wake-ups are logged at most once a minute, and the poll is still there.
 *
 * Who owns what is read from the partitions table (one statement) at most once per renewal interval; a partition that
 * moved meanwhile wakes its previous owner, which finds nothing of it to claim, and its new owner polls. Wake-ups to one
 * instance never pile up: one in flight, and one more after it if others were asked for meanwhile.
 */
export class OwnerWakeUps {
  private readonly logger = new Logger('WebhookPartitions');
  private readonly agent = new Agent({ connectTimeout: WAKE_TIMEOUT_MS, headersTimeout: WAKE_TIMEOUT_MS, bodyTimeout: WAKE_TIMEOUT_MS });
  private directory: { readonly urls: ReadonlyMap<number, string>; readonly readAt: number } | null = null;
  private reading: Promise<ReadonlyMap<number, string>> | null = null;
  /** The wake-up in flight to each URL, and whether another was asked for meanwhile. */
  private readonly sending = new Map<string, { again: boolean; done: Promise<void> }>();
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

  /** Resolves when the wake-up that covers this call (the one in flight, or the one after it) has ended. */
  private wake(url: string): Promise<void> {
    const inFlight = this.sending.get(url);
    if (inFlight) {
      inFlight.again = true;
      return inFlight.done.then(() => this.sending.get(url)?.done);
    }
    const entry = { again: false, done: Promise.resolve() };
    entry.done = this.send(url).finally(() => {
      this.sending.delete(url);
      if (entry.again) void this.wake(url);
    });
    this.sending.set(url, entry);
    return entry.done;
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
