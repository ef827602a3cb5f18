import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { EGRESS_WINDOW_MS } from '../../src/notifications/delivery/partitions/egress-watch';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import type { DatabaseFaults } from './database-faults';
import { type EgressFaults, STAND_DOWN_GRACE_MS } from './egress-faults';
import { claimOrder, type DeliveryRow, type InMemoryOutboxStore, isDue } from './in-memory-outbox-store';
import type { InMemoryPartitionLeases } from './in-memory-partition-leases';
import type { InvariantName } from './invariants';
import type { ClockSkews, SimTime } from './sim-time';
import type { StoreObserver } from './store-observer';
import type { UserWebhooks } from './webhooks';
import {
  atTime,
  type DeliveryTrack,
  engineCapacityOf,
  formatMs,
  HELD_PER_ENDPOINT_SLOT,
  HELD_PER_SLOT,
  type Instance,
  MINUTE,
  SCHEDULE_MS,
  SCHEDULE_SLACK_MS,
  SECOND,
  type SimEvent,
  SKIPPED_FOR_OPEN_CIRCUIT,
} from './world-model';

/** What the invariants over the tables need of the world. */
export interface InvariantWorld {
  readonly time: SimTime;
  readonly store: InMemoryOutboxStore;
  readonly partitions: InMemoryPartitionLeases;
  readonly instances: readonly Instance[];
  readonly tokenOwner: ReadonlyMap<string, Instance>;
  readonly events: ReadonlyMap<string, SimEvent>;
  readonly observer: Pick<StoreObserver, 'tracks' | 'leasesGivenUp' | 'observeStore'>;
  readonly webhooks: Pick<UserWebhooks, 'isOrderedStream'>;
  readonly database: DatabaseFaults;
  readonly egress: EgressFaults;
  readonly skews: Pick<ClockSkews, 'maxMs'>;
  /** Time no instance could deliver so far: the schedule's deadlines move by it. */
  readonly haltedMs: number;
  /** Writes and requests so far. */
  readonly activity: number;
  /** The first violation not tolerated, or an error of the simulation itself: thrown here, once the engines are at rest. */
  readonly failure: Error | null;
  violate(name: InvariantName, key: string, detail: string): void;
}

/** Who holds each partition's running lease, as the partitions table says (by instance name). */
function partitionOwners(partitions: InMemoryPartitionLeases, now: number): Map<number, string> {
  const owners = new Map<number, string>();
  for (const [partition, row] of partitions.partitions) if (row.holder !== null && row.leaseUntil > now) owners.set(partition, row.holder);
  return owners;
}

/**
 * The invariants over the state, checked at rest after every step and timer: the outbox's rows against what the world
 * knows (nothing acknowledged lost, one PENDING delivery per event, final within the schedule, picked up promptly, the
 * memory bound), and the partitions table (an instance whose network is down stands down).
 */
export class StateInvariants {
  /** Deliveries PENDING when last seen: one that vanishes (not finished, so no purge may take it) is lost. */
  private readonly pendingSeen = new Set<number>();
  /** Deliveries seen final, and when the latest delivery of each stream was (global time): an ordered row's schedule starts then. */
  private readonly finalSeen = new Set<number>();
  private readonly streamFinalAt = new Map<number, number>();
  /** The activity and time of the latest check. */
  private checked = { activity: -1, at: 0 };

  constructor(private readonly world: InvariantWorld) {}

  /**
   * Checks again when writes or requests happened since the latest check. Unchanged rows are looked at again every 15 s:
   * what depends on time alone (a delivery not picked up, one not final within its schedule) stays wrong until it
   * changes, so it is seen all the same.
   */
  checkIfMoved(): void {
    if (this.world.activity !== this.checked.activity || this.world.time.now - this.checked.at >= 15 * SECOND) this.check();
  }

  /** Checks every invariant over the state; throws the first violation not tolerated (or an error of the simulation). */
  check(): void {
    const world = this.world;
    if (world.failure) throw world.failure;
    this.checked = { activity: world.activity, at: world.time.now };
    world.observer.observeStore();
    const now = world.time.now;
    const byEvent = new Map<string, number[]>();
    const pending = new Map<string, number[]>();
    const deliverers = world.instances.filter((instance) => instance.alive && instance.role !== 'api');
    const held = new Map<Instance, number>();
    /** Of those, the leases still running by the holder's own clock: an engine counts a lease until it ends by that clock. */
    const heldByItsClock = new Map<Instance, number>();
    /** Leases held per instance and user: a user holding their share of an instance is left out of its claims. */
    const heldOfUser = new Map<string, number>();
    const promptMs = 5 * SECOND + 2 * world.skews.maxMs;
    for (const row of world.store.deliveries.values()) {
      const owner = row.lockedBy === null ? undefined : world.tokenOwner.get(row.lockedBy);
      if (owner?.alive && row.status === DeliveryStatus.PENDING && row.lockedUntil! >= now) {
        if (!world.observer.leasesGivenUp.has(`${row.lockedBy}#${row.id}`)) {
          held.set(owner, (held.get(owner) ?? 0) + 1);
          if (row.lockedUntil! > owner.clock.now()) heldByItsClock.set(owner, (heldByItsClock.get(owner) ?? 0) + 1);
        }
        heldOfUser.set(`${owner.name} ${row.userId}`, (heldOfUser.get(`${owner.name} ${row.userId}`) ?? 0) + 1);
      }
    }
    // An instance waiting on a stalled database call (over a second: an outage it waits out) or paused cannot claim
    // promptly: it does not count, nor does any while the database is down (or was, within the bound); nor one shutting
    // down, which claims nothing more (seed 154771: its drain waited 5 s for a timeout while the deliveries it had just
    // recovered came due); nor one that started less than the bound ago (what waited while no instance had room is
    // measured from its start). Room is what the engine counts (InstanceCapacity): its capacity is the memory bound
    // capped by what its slots start within a lease at the recent attempt duration (slow or timing-out endpoints make it
    // smaller), and it claims only when a batch (or half that capacity) fits (`fitsBatch`).
    const hasRoom = (instance: Instance) => {
      const capacity = engineCapacityOf(instance).capacity();
      return (
        !instance.stopping &&
        instance.stalledUntil < now - promptMs &&
        !world.database.downDuring(now - promptMs, now) &&
        instance.startedAt < now - promptMs &&
        capacity - (held.get(instance) ?? 0) >= Math.min(instance.settings.batchSize, capacity / 2)
      );
    };
    // Room for a user's delivery: a claim leaves out the users that hold their share of the instance already
    // (perEndpointConcurrency × HELD_PER_ENDPOINT_SLOT): they are claimed for again as their attempts end.
    const hasRoomFor = (instance: Instance, userId: number) =>
      hasRoom(instance) &&
      (heldOfUser.get(`${instance.name} ${userId}`) ?? 0) < instance.settings.perEndpointConcurrency * HELD_PER_ENDPOINT_SLOT;
    // Only the owner of the row's partition claims it (while the partitions table says its lease runs), and every
    // delivering instance sharing the partitions polls every second. What waited while no instance held the partition
    // (its owner died, paused, or lost the database) is measured from when one holds it again.
    let owners: Map<number, string> | null = null; // read only when a row is claimable
    const looksFor = (instance: Instance, row: DeliveryRow) =>
      (owners ??= partitionOwners(world.partitions, now)).get(partitionOf(row.userId)) === instance.name;
    const roomFor = (row: DeliveryRow) => deliverers.some((instance) => looksFor(instance, row) && hasRoomFor(instance, row.userId));
    // Claims take due rows in order (next attempt time, then id), each instance those of users it has room for: a row
    // waits its turn while an instance that looks for it and has room for it took rows within the bound (its drain makes
    // progress) and a due row comes before it in that instance's line; a minute at most, as long as an `all` process may
    // take to learn of a row. Its wait counts from when that stops (seed 13174: an instance claiming two at a time
    // through 71 deliveries it had just recovered, slow attempts between, reached the last ones after 7 s).
    // An ordered stream's delivery waits its turn behind the first PENDING one before it: no claim may take it.
    const firstPending = new Map<number, number>();
    for (const row of world.store.deliveries.values()) {
      if (row.streamId === null) continue;
      if (row.status === DeliveryStatus.PENDING) firstPending.set(row.streamId, Math.min(firstPending.get(row.streamId) ?? row.id, row.id));
      else if (!this.finalSeen.has(row.id)) {
        this.finalSeen.add(row.id);
        this.streamFinalAt.set(row.streamId, now);
      }
    }
    const waitsInStream = (row: DeliveryRow) =>
      world.webhooks.isOrderedStream(row.streamId) && (firstPending.get(row.streamId!) ?? Number.POSITIVE_INFINITY) < row.id;
    const dueInClaimOrder = [...world.store.deliveries.values()].filter((row) => isDue(row, now) && !waitsInStream(row)).sort(claimOrder);
    const firstInLine = new Map(
      deliverers.map(
        (instance) => [instance, dueInClaimOrder.find((row) => looksFor(instance, row) && hasRoomFor(instance, row.userId))] as const,
      ),
    );
    const waitsItsTurn = (row: DeliveryRow, track: DeliveryTrack) => {
      const waiting = deliverers.some((instance) => {
        const first = firstInLine.get(instance);
        return (
          first !== undefined &&
          claimOrder(first, row) < 0 &&
          instance.tookAt > now - promptMs &&
          looksFor(instance, row) &&
          hasRoomFor(instance, row.userId)
        );
      });
      if (!waiting) track.waitingTurnSince = undefined;
      else track.waitingTurnSince ??= now;
      return waiting && now - track.waitingTurnSince! <= MINUTE;
    };
    for (const row of world.store.deliveries.values()) {
      const ofEvent = byEvent.get(row.eventId);
      if (ofEvent) ofEvent.push(row.id);
      else byEvent.set(row.eventId, [row.id]);
      if (row.status !== DeliveryStatus.PENDING) {
        this.pendingSeen.delete(row.id);
        continue;
      }
      this.pendingSeen.add(row.id);
      const pendingOfEvent = pending.get(row.eventId);
      if (pendingOfEvent) pendingOfEvent.push(row.id);
      else pending.set(row.eventId, [row.id]);
      const track = world.observer.tracks.get(row.id)!;
      // In an ordered stream, its schedule starts when the one before it became final (guarantee 4), if that is later.
      const inTurnSince = world.webhooks.isOrderedStream(row.streamId) ? (this.streamFinalAt.get(row.streamId!) ?? 0) : 0;
      const deadline = Math.max(track.deadline, inTurnSince + SCHEDULE_MS + SCHEDULE_SLACK_MS);
      if (!waitsInStream(row) && now > deadline + (world.haltedMs - track.haltedAtCreation))
        world.violate(
          'final-within-schedule',
          `late ${row.id}`,
          `delivery ${row.id} (${row.eventId}) still PENDING after ${formatMs(now - (track.deadline - SCHEDULE_MS - SCHEDULE_SLACK_MS))}: ` +
            `${row.attemptCount} attempts, next at ${row.nextAttemptAt === null ? '-' : atTime(row.nextAttemptAt)}${row.waitingReason ? ` (${row.waitingReason})` : ''}` +
            `${track.parked ? '; parked by an open circuit before' : ''}`,
        );
      if (row.lastError?.startsWith(SKIPPED_FOR_OPEN_CIRCUIT)) track.parked = true;
      const free = row.lockedUntil === null || row.lockedUntil < now;
      const leaseEnded = row.lockedUntil !== null && now > Math.max(row.lockedUntil, track.visibleAt);
      const parkedEnded = row.waitingReason !== null && row.nextAttemptAt !== null && now >= Math.max(row.nextAttemptAt, track.visibleAt);
      // A released lease makes the row claimable only then: a claim made before it could not have taken it.
      const since = Math.max(leaseEnded ? row.lockedUntil! : (row.nextAttemptAt ?? now), track.visibleAt, track.releasedAt ?? 0);
      // Measured from when an instance that looks for it had room for it: what waited for room (a user's share, attempts
      // or records to end) is claimed when the room frees, after one claim's round trip, never at that very instant.
      const claimable = free && (leaseEnded || parkedEnded) && !waitsInStream(row);
      if (!claimable) track.waitingTurnSince = undefined;
      if (claimable && !waitsItsTurn(row, track) && roomFor(row)) track.roomSince ??= now;
      else track.roomSince = null;
      const expired = leaseEnded && track.roomSince !== null && now - Math.max(since, track.roomSince) > promptMs;
      const parkedDue = !leaseEnded && parkedEnded && track.roomSince !== null && now - Math.max(since, track.roomSince) > promptMs;
      if (expired || parkedDue)
        world.violate(
          'prompt-pickup',
          `prompt ${row.id}@${row.lockedUntil ?? row.nextAttemptAt}`,
          `delivery ${row.id} (${row.eventId}) ${expired ? `lease ended at ${atTime(row.lockedUntil!)}` : `parked until ${atTime(row.nextAttemptAt!)}`} and nobody claimed it since (${formatMs(now - (expired ? row.lockedUntil! : row.nextAttemptAt!))}, with room for ${formatMs(now - track.roomSince!)}); ` +
            `${track.origin}${track.by ? ` by ${track.by.name}` : ''}${row.lockedBy ? `, lease of ${world.tokenOwner.get(row.lockedBy)?.name ?? '?'}` : ''}; room in ` +
            deliverers
              .filter((instance) => looksFor(instance, row) && hasRoomFor(instance, row.userId))
              .map(
                (instance) =>
                  `${instance.name} (${instance.role}, holds ${held.get(instance) ?? 0} of ${engineCapacityOf(instance).capacity()}, of user ${row.userId} ${heldOfUser.get(`${instance.name} ${row.userId}`) ?? 0})`,
              )
              .join(', '),
        );
    }
    for (const [eventId, ids] of pending)
      if (ids.length > 1)
        world.violate(
          'one-pending-delivery',
          `pending ${ids.join(',')}`,
          `event ${eventId} has ${ids.length} PENDING deliveries: ${ids.join(', ')}`,
        );
    for (const id of this.pendingSeen) {
      if (world.store.deliveries.has(id)) continue;
      this.pendingSeen.delete(id);
      world.violate('no-lost-event', `gone ${id}`, `delivery ${id} (${world.observer.tracks.get(id)?.eventId}) vanished while PENDING`);
    }
    for (const event of world.events.values()) {
      if (!event.acked || event.purged) continue;
      if (!world.store.events.has(event.id))
        world.violate('no-lost-event', `lost ${event.id}`, `acknowledged event ${event.id} is gone from the outbox without a purge`);
      else if (!byEvent.has(event.id)) world.violate('no-lost-event', `lost ${event.id}`, `acknowledged event ${event.id} has no delivery`);
    }
    for (const [instance, count] of held) {
      const capacity = instance.settings.concurrency * HELD_PER_SLOT;
      if (count > capacity)
        world.violate(
          'bounded-memory',
          `memory ${instance.name}@${count}`,
          `${instance.name} holds ${count} leased deliveries (capacity ${capacity})`,
        );
    }
    // Its room counts every lease it holds, in one step or another, until the lease ends by its clock (a reservation ends
    // then): one it does not count would be claimed over, though the bound above is reached only when the instance is full.
    for (const [instance, count] of heldByItsClock) {
      const steps = engineCapacityOf(instance).leasesByStep();
      const counted = Object.values(steps).reduce((sum, n) => sum + n, 0);
      if (counted < count)
        world.violate(
          'bounded-memory',
          `uncounted ${instance.name}@${count}`,
          `${instance.name} holds ${count} leased deliveries but its steps count ${counted} (${JSON.stringify(steps)})`,
        );
    }
    this.checkStandDown(deliverers, now);
    if (world.failure) throw world.failure;
  }

  /**
   * An instance that reaches no receiver while another does owns no partition once the signs have lasted
   * STAND_DOWN_GRACE_MS: the others deliver its users. Its rounds may not run while it is paused or the database is down.
   */
  private checkStandDown(deliverers: readonly Instance[], now: number): void {
    const world = this.world;
    const since = now - STAND_DOWN_GRACE_MS - EGRESS_WINDOW_MS;
    if (world.database.downDuring(since, now)) return;
    let owners: string[] | null = null; // read only when an instance should have stood down
    for (const instance of deliverers) {
      if (!world.egress.isDown(instance, now) || instance.startedAt > since) continue;
      if (instance.pauses.some((pause) => pause.until >= since)) continue;
      if (
        !world.egress.standDownDue(
          instance,
          deliverers.filter((other) => other !== instance),
          now,
        )
      )
        continue;
      owners ??= [...partitionOwners(world.partitions, now).values()];
      const owned = owners.filter((holder) => holder === instance.name).length;
      if (owned > 0)
        world.violate(
          'egress-stand-down',
          `egress ${instance.name}`,
          `${instance.name} still owns ${owned} partitions: its network has been down since ${atTime(world.egress.downSince(instance, now)!)}, no receiver answered it for over ${formatMs(EGRESS_WINDOW_MS)} while another instance's did`,
        );
    }
  }
}
