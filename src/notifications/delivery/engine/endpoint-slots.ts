import { Logger } from '@nestjs/common';
import type { Clock, ClockTimer } from '../../clock/clock';
import { GroupCommit } from '../../common/concurrency/group-commit';
import { type DeliverySettings, LEASE_MARGIN_MS } from '../delivery-settings';
import { type EndpointKey, hostOf } from './endpoint-queues';
import type { EngineWork } from './engine-work';
import type { EndpointSlot, OutboxStore, SlotTaken } from './outbox-store';

/** An attempt whose endpoint's slots are all held tries again after this long, doubling while they stay held, up to {@link SLOT_RETRY_MAX_MS}. */
export const SLOT_RETRY_MS = 50;
export const SLOT_RETRY_MAX_MS = 1_000;
/** Releases wait this long for company, as records do: at low rates a slot's release would otherwise be a transaction of its own. */
const RELEASE_LINGER_MS = 20;
/**
 * A slot no attempt queued here needs is kept this long before it is released: the next attempt to that endpoint (the
 * next publish of a steady producer) takes it over without a round trip, and finds it free rather than held by its own
 * instance's release still in flight.
 */
export const SPARE_SLOT_MS = 1_000;

/**
 * This instance's side of the per-endpoint cap across instances ({@link OutboxStore.takeSlot}): an attempt takes one of
 * its endpoint's slots before its request, and when the answer arrives the slot goes to the next attempt queued here for
 * that endpoint (no round trip) or back to the store, group-committed. A slot handed on must still fit the attempt
 * (its deadline, record and the clock skew we tolerate) before it frees itself; one that does not is released.
 */
export class EndpointSlots {
  private readonly logger = new Logger('WebhookDelivery');
  /** Slots whose request got its answer, for the next attempt to their endpoint, until {@link releaseUnneeded}. */
  private readonly spare = new Map<EndpointKey, EndpointSlot[]>();
  /** Endpoints that kept a slot since the last {@link releaseUnneeded}, or still had attempts queued then. */
  private readonly kept = new Set<EndpointKey>();
  /** Endpoints whose spare slots no queued attempt needs: released when their timer fires, unless taken over meanwhile. */
  private readonly unneeded = new Map<EndpointKey, ClockTimer>();
  private readonly releases: GroupCommit<EndpointSlot, undefined>;

  constructor(
    private readonly outbox: OutboxStore,
    private readonly clock: Clock,
    private readonly settings: DeliverySettings,
    private readonly work: EngineWork,
    /** Whether attempts to the endpoint are queued in this instance. */
    private readonly queued: (endpoint: EndpointKey) => boolean,
  ) {
    this.releases = new GroupCommit(
      async (slots) => {
        await this.outbox.releaseSlots(slots);
        return slots.map(() => undefined);
      },
      {
        maxGroupSize: settings.batchSize,
        concurrency: 2,
        linger: { ms: RELEASE_LINGER_MS, wait: (ms) => new Promise<void>((resolve) => this.clock.setTimeout(resolve, ms)) },
      },
    );
  }

  /** A slot of `endpoint` this instance holds already and an attempt starting now fits in; those that do not are released. */
  spareFor(endpoint: EndpointKey, now: number): EndpointSlot | null {
    const slots = this.spare.get(endpoint);
    for (let slot = slots?.pop(); slot !== undefined; slot = slots?.pop()) {
      if (slots!.length === 0) this.spare.delete(endpoint);
      if (now + this.settings.timeoutMs + LEASE_MARGIN_MS < slot.heldUntil) return slot;
      this.release(slot);
    }
    return null;
  }

  /** Takes a slot of `endpoint` until `until` (the attempt's lease end), or tells why not. */
  take(endpoint: EndpointKey, until: number, probing: boolean): Promise<SlotTaken> {
    return this.outbox.takeSlot(endpoint, this.settings.perEndpointConcurrency, this.clock.now(), until, probing);
  }

  /** The slot's request got its answer: kept for the next attempt to its endpoint. */
  keep(slot: EndpointSlot): void {
    const slots = this.spare.get(slot.endpoint);
    if (slots) slots.push(slot);
    else this.spare.set(slot.endpoint, [slot]);
    this.kept.add(slot.endpoint);
  }

  /** Releases the spare slots of the endpoints no attempt waits for here, once they have stayed unused for {@link SPARE_SLOT_MS}. */
  releaseUnneeded(): void {
    for (const endpoint of this.kept) {
      if (!this.spare.has(endpoint) || this.unneeded.has(endpoint)) {
        this.kept.delete(endpoint);
        continue;
      }
      if (this.queued(endpoint)) continue; // looked at again at the next pump, until its queue is empty
      this.kept.delete(endpoint);
      const timer = this.clock.setTimeout(() => {
        this.unneeded.delete(endpoint);
        if (!this.queued(endpoint)) this.releaseSpare(endpoint);
      }, SPARE_SLOT_MS);
      this.unneeded.set(endpoint, timer);
    }
  }

  /** Shutdown: every spare slot goes back to the store now. */
  releaseAll(): void {
    for (const timer of this.unneeded.values()) timer.cancel();
    this.unneeded.clear();
    this.kept.clear();
    for (const endpoint of [...this.spare.keys()]) this.releaseSpare(endpoint);
  }

  private releaseSpare(endpoint: EndpointKey): void {
    const slots = this.spare.get(endpoint) ?? [];
    this.spare.delete(endpoint);
    for (const slot of slots) this.release(slot);
  }

  /** Gives the slot back to the store; should that fail, it frees itself when its holder's lease ends. */
  release(slot: EndpointSlot): void {
    void this.work.track(
      this.releases.submit(slot).catch((error: unknown) => {
        this.logger.warn(
          `Host ${hostOf(slot.endpoint)}: a request slot was not released (${(error as Error).message}); it frees itself when its lease ends`,
        );
      }),
    );
  }

  /** Resolves when the releases submitted so far are committed (or given up). */
  idle(): Promise<void> {
    return this.releases.idle();
  }
}
