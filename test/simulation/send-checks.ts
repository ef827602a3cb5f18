import { LEASE_MARGIN_MS } from '../../src/notifications/delivery/delivery-settings';
import type { ClaimedDelivery } from '../../src/notifications/delivery/engine/outbox-store';
import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../../src/notifications/delivery/retry-policy';
import type { CircuitOpenings } from './circuit-openings';
import type { DatabaseFaults } from './database-faults';
import type { DeliveryRow, InMemoryOutboxStore } from './in-memory-outbox-store';
import type { InvariantName } from './invariants';
import type { ClockSkews, SimTime } from './sim-time';
import type { StoreObserver } from './store-observer';
import type { UserWebhooks } from './webhooks';
import {
  atTime,
  type DuplicateCause,
  engineQueuesOf,
  formatMs,
  type Instance,
  type SendRecord,
  type SimEvent,
  TIMEOUT_MS,
} from './world-model';

/** What the checks of a request going out need of the world. */
export interface SendCheckWorld {
  readonly time: SimTime;
  readonly store: InMemoryOutboxStore;
  readonly events: ReadonlyMap<string, SimEvent>;
  readonly database: DatabaseFaults;
  readonly circuits: CircuitOpenings;
  readonly skews: Pick<ClockSkews, 'seenMs'>;
  readonly webhooks: Pick<UserWebhooks, 'isOrderedStream'>;
  readonly observer: Pick<StoreObserver, 'trackOf' | 'noteSent'>;
  violate(name: InvariantName, key: string, detail: string): void;
}

/**
 * Whether a pause of the instance that ended at or after `since` lasted into the end of a lease ending at `leaseUntil`:
 * past the last moment an attempt may start under it (its deadline and LEASE_MARGIN_MS before the end).
 */
function pausedPast(instance: Instance, since: number, leaseUntil: number): boolean {
  return instance.pauses.some(
    (pause) => pause.until >= since && pause.from <= leaseUntil && pause.until > leaseUntil - TIMEOUT_MS - LEASE_MARGIN_MS,
  );
}

/**
 * The invariants checked as each request leaves (a repeat excused only by its cause, the lease covering it, attempt
 * numbers, retry delays, the caps, one owner and one probe at a time, inherited circuits, the turn in an ordered stream),
 * and the requests in flight they are checked against.
 */
export class SendChecks {
  /** Repeated sends of an attempt, each excused by its cause (at-least-once delivery). */
  readonly excusedDuplicates: Record<DuplicateCause, number> = { crash: 0, pause: 0, outage: 0 };
  private readonly inFlightByEndpoint = new Map<string, SendRecord[]>();

  constructor(private readonly world: SendCheckWorld) {}

  /** The checks made as a request goes out; returns its record, now in flight. */
  started(instance: Instance, claim: ClaimedDelivery, attempt: number, endpoint: string, partitionLeaseAtCheck: number): SendRecord {
    const now = this.world.time.now;
    const event = this.world.events.get(claim.eventId);
    const what = `${claim.eventId} (delivery ${claim.id}) attempt ${attempt} by ${instance.name}`;
    if (event?.tx && event.tx.state !== 'committed')
      this.world.violate('commit-before-send', `tx ${claim.eventId}`, `${what} sent while its host transaction is ${event.tx.state}`);
    if (attempt < 1 || attempt > MAX_ATTEMPTS)
      this.world.violate('attempt-numbers', `n ${claim.id}`, `${what}: attempt number out of 1..${MAX_ATTEMPTS}`);
    const track = this.world.observer.trackOf(claim.id);
    const earlier = track?.sends.get(attempt) ?? [];
    const leaseUntil = claim.lockedUntil - instance.clock.skewMs;
    // Sent after its lease could cover it because the process was paused since its last look: at-least-once allows that
    // request (a repeat, another instance's request alongside it), nothing else does.
    const late = pausedPast(instance, now, leaseUntil);
    if (!late && now + TIMEOUT_MS + LEASE_MARGIN_MS > leaseUntil)
      this.world.violate(
        'no-duplicate-send',
        `lease ${claim.id}#${attempt}`,
        `${what} starts ${formatMs(now + TIMEOUT_MS + LEASE_MARGIN_MS - leaseUntil)} too late for its lease (ends ${atTime(leaseUntil)}) to cover its deadline, record budget and the tolerated skew`,
      );
    if (track && !late && earlier.length === 0 && attempt !== track.recordedEnd.size + 1)
      this.world.violate(
        'attempt-numbers',
        `n ${claim.id}#${attempt}`,
        `${what}: ${track.recordedEnd.size} attempt(s) recorded, so the next is ${track.recordedEnd.size + 1}`,
      );
    if (earlier.length > 0) {
      // A repeat is excused only by what took the first sender's lease, or by a pause that made this request late.
      const causes = earlier.map((send) => this.lostLease(send) ?? (late ? 'pause' : null));
      const unexcused = earlier.filter((_, index) => causes[index] === null);
      if (unexcused.length === 0) this.excusedDuplicates[causes[causes.length - 1]!]++;
      else
        this.world.violate(
          'no-duplicate-send',
          `dup ${claim.id}#${attempt}`,
          `${what} sent again: first sent by ${unexcused[0].instance.name} at ${atTime(unexcused[0].startedAt)}, ` +
            `${unexcused[0].completedAt === null ? 'still in flight' : `answered at ${atTime(unexcused[0].completedAt)}`}, its record ${unexcused[0].record}`,
        );
    }
    const row = this.world.store.deliveries.get(claim.id);
    if (!late && row?.status === DeliveryStatus.DELIVERED)
      this.world.violate('no-request-for-delivered', `d ${claim.id}`, `${what}: the delivery is DELIVERED`);
    else if (!late && event && event.deliveredAt !== null && track?.origin !== 'redelivery')
      this.world.violate(
        'no-request-for-delivered',
        `e ${claim.eventId}#${claim.id}`,
        `${what}: the event was delivered at ${atTime(event.deliveredAt)}, and this delivery is a ${track?.origin ?? 'purged one'}, not a redelivery a user asked for`,
      );
    if (attempt >= 2 && track) {
      const previousEnd = track.recordedEnd.get(attempt - 1);
      const delay = RETRY_DELAYS_MS[attempt - 2];
      // Due times come from the clock of the instance that recorded attempt n: one whose clock runs ahead of it starts
      // attempt n+1 that much early (by at most the skew this run has had, itself at most the tolerated MAX_CLOCK_SKEW_MS).
      if (previousEnd !== undefined && now < previousEnd + delay - this.world.skews.seenMs)
        this.world.violate(
          'retry-delays',
          `delay ${claim.id}#${attempt}`,
          `${what} ${formatMs(previousEnd + delay - now)} early: attempt ${attempt - 1} ended at ${atTime(previousEnd)}, the spec's delay is ${formatMs(delay)}`,
        );
    }
    const partition = partitionOf(claim.userId);
    // Sent after the lease of its partition could cover it (the process paused between its check and the request): its
    // partition may have a new owner, whose requests go alongside; the owner's invariants excuse that request, only that.
    const partitionLeaseUntil = partitionLeaseAtCheck - instance.clock.skewMs;
    const lateForOwner = late || pausedPast(instance, now, partitionLeaseUntil);
    const perEndpoint = (instance.inFlight.get(endpoint) ?? 0) + 1;
    const inFlight = this.inFlightByEndpoint.get(endpoint) ?? [];
    const onTime = inFlight.filter((send) => !send.late);
    if (!lateForOwner && onTime.length + 1 > instance.settings.perEndpointConcurrency)
      this.world.violate(
        'endpoint-cap',
        `cap ${claim.id}#${attempt}`,
        `${what}: ${onTime.length + 1} in flight to ${endpoint}, all instances together (cap ${instance.settings.perEndpointConcurrency}; ${onTime.map((send) => `${send.instance.name}: delivery ${send.deliveryId}`).join(', ')})`,
      );
    if (instance.inFlightTotal + 1 > instance.settings.concurrency)
      this.world.violate(
        'endpoint-cap',
        `total ${claim.id}#${attempt}`,
        `${what}: ${instance.inFlightTotal + 1} in flight (concurrency ${instance.settings.concurrency})`,
      );
    const otherOwners = [...this.inFlightByEndpoint.values()]
      .flat()
      .filter((send) => !send.late && send.instance !== instance && partitionOf(send.userId) === partition);
    if (!lateForOwner && otherOwners.length > 0)
      this.world.violate(
        'one-owner',
        `owner ${claim.id}#${attempt}`,
        `${what}: partition ${partition} (user ${claim.userId}) has requests of another instance in flight (${otherOwners.map((send) => `${send.instance.name}: delivery ${send.deliveryId}`).join(', ')})`,
      );
    const probe = engineQueuesOf(instance).isHalfOpen(endpoint, instance.clock.now());
    const probes = onTime.filter((send) => send.probe);
    if (probe && !lateForOwner && probes.length > 0)
      this.world.violate(
        'one-probe',
        `probe ${claim.id}#${attempt}`,
        `${what} probes ${endpoint} (its circuit is half-open in ${instance.name}) while ${probes.length} other probe(s) are in flight (${probes.map((p) => `${p.instance.name}: delivery ${p.deliveryId}`).join(', ')})`,
      );
    const notInherited = lateForOwner
      ? null
      : this.world.circuits.violation(instance, endpoint, partition, now, this.world.skews.seenMs, (opener, from, to) =>
          this.unsettled(opener, from, to),
        );
    if (notInherited) this.world.violate('circuit-inherited', `inherit ${claim.id}#${attempt}`, `${what} to ${endpoint}: ${notInherited}`);
    const record: SendRecord = {
      instance,
      userId: claim.userId,
      deliveryId: claim.id,
      eventId: claim.eventId,
      attempt,
      endpoint,
      startedAt: now,
      completedAt: null,
      record: 'none',
      leaseUntil,
      late: lateForOwner,
      probe,
    };
    inFlight.push(record);
    this.inFlightByEndpoint.set(endpoint, inFlight);
    instance.inFlight.set(endpoint, perEndpoint);
    instance.inFlightTotal++;
    track?.sends.set(attempt, [...earlier, record]);
    this.world.observer.noteSent(claim, record);
    return record;
  }

  /** The request of `record` got its answer (or gave up): it is no longer in flight. */
  ended(record: SendRecord): void {
    const { instance, endpoint } = record;
    record.completedAt = this.world.time.now;
    const list = this.inFlightByEndpoint.get(endpoint)!;
    list.splice(list.indexOf(record), 1);
    instance.inFlight.set(endpoint, instance.inFlight.get(endpoint)! - 1);
    instance.inFlightTotal--;
  }

  /** `ordered-delivery`: a request of an ordered stream's delivery leaves while no delivery queued before it there is PENDING. */
  inTurn(instance: Instance, claim: ClaimedDelivery, attempt: number): void {
    const row = this.world.store.deliveries.get(claim.id);
    if (!row || !this.world.webhooks.isOrderedStream(row.streamId)) return;
    const before = this.pendingBefore(row);
    if (before !== undefined)
      this.world.violate(
        'ordered-delivery',
        `order ${claim.id}#${attempt}`,
        `${claim.eventId} (delivery ${claim.id}, sequence ${row.sequence}) attempt ${attempt} sent by ${instance.name} while delivery ` +
          `${before.id} (sequence ${before.sequence}, ${before.attemptCount} attempts) of its ordered stream ${row.streamId} is PENDING`,
      );
  }

  /** The first PENDING delivery queued before `row` in its stream, if any. */
  private pendingBefore(row: DeliveryRow): DeliveryRow | undefined {
    let first: DeliveryRow | undefined;
    for (const other of this.world.store.deliveries.values())
      if (
        other.streamId === row.streamId &&
        other.id < row.id &&
        other.status === DeliveryStatus.PENDING &&
        (!first || other.id < first.id)
      )
        first = other;
    return first;
  }

  /** What cost a sent attempt's lease before its record was stored, if anything: then a repeat is excused. */
  private lostLease(send: SendRecord): DuplicateCause | null {
    if (send.record === 'stored') return null;
    if (!send.instance.alive) return 'crash';
    if (pausedPast(send.instance, send.startedAt, send.leaseUntil)) return 'pause';
    // The engine retries a record until its lease's end less the tolerated skew: only a database down then loses it.
    if (this.world.database.downDuring(send.leaseUntil - LEASE_MARGIN_MS, send.leaseUntil)) return 'outage';
    return null;
  }

  /** `instance` crashed, was paused or stalled, or the database was down, at some time in [from, to]. */
  private unsettled(instance: Instance, from: number, to: number): boolean {
    return (
      !instance.alive ||
      instance.pauses.some((pause) => pause.until >= from && pause.from <= to) ||
      instance.stalledUntil >= from ||
      this.world.database.downDuring(from, to)
    );
  }
}
