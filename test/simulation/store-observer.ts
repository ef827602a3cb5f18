import type { AttemptRecord, ClaimedDelivery } from '../../src/notifications/delivery/engine/outbox-store';
import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import type { KeptCircuit } from '../../src/notifications/delivery/partitions/kept-circuit';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import type { CircuitOpenings, KeepOutcome } from './circuit-openings';
import type { InMemoryOutboxStore } from './in-memory-outbox-store';
import type { StoreNotes } from './instance-store';
import type { InvariantName } from './invariants';
import type { Receivers } from './receivers';
import type { ClockSkews, SimTime } from './sim-time';
import {
  atTime,
  type DeliveryTrack,
  formatMs,
  type Instance,
  MAX_COOL_DOWN_FACTOR,
  type Origin,
  SCHEDULE_MS,
  SCHEDULE_SLACK_MS,
  type SendRecord,
  type SimEvent,
  TIMEOUT_MS,
  unsentRecord,
} from './world-model';

/** What following the stores' reports needs of the world. */
export interface ObserverWorld {
  readonly time: SimTime;
  readonly store: InMemoryOutboxStore;
  readonly events: ReadonlyMap<string, SimEvent>;
  readonly circuits: CircuitOpenings;
  readonly receivers: Pick<Receivers, 'answers' | 'failedAlone' | 'lastAnsweredAt'>;
  readonly skews: Pick<ClockSkews, 'maxMs' | 'seenMs'>;
  /** Time no instance could deliver so far: a new delivery's deadline moves by what comes after its creation. */
  readonly haltedMs: number;
  failure: Error | null;
  violate(name: InvariantName, key: string, detail: string): void;
  trace(text: string): void;
}

/**
 * What the instances' stores and engines tell the world (what they created, claimed, sent, recorded, released, purged,
 * announced): a track per delivery, and the checks made on a report as it comes (`no-spurious-skip`, `announced-once`).
 */
export class StoreObserver implements StoreNotes {
  /** Per delivery: its deadline, its sends and its recorded attempts. */
  readonly tracks = new Map<number, DeliveryTrack>();
  /** `token#id` of the leases an instance let go of after a failed release, cancel or record (see noteLeasesGivenUp). */
  readonly leasesGivenUp = new Set<string>();
  private seenDeliveryId = 0;
  /** `token#id` of a lease → the request sent under it. */
  private readonly sendsByClaim = new Map<string, SendRecord>();
  /** `deliveryId#attemptNumber` → how many times an instance announced it on `attemptRecorded`. */
  private readonly announced = new Map<string, number>();

  constructor(private readonly world: ObserverWorld) {}

  /** New deliveries get their track (deadline from now). */
  observeStore(origin: Origin = 'publish', by?: Instance): void {
    const world = this.world;
    if (world.store.lastDeliveryId <= this.seenDeliveryId) return;
    for (const row of world.store.deliveries.values()) {
      if (row.id <= this.seenDeliveryId) continue;
      this.seenDeliveryId = row.id;
      const recovery = row.waitingReason?.startsWith('recovery') ? Math.max(0, row.nextAttemptAt! - row.createdAt) : 0;
      this.tracks.set(row.id, {
        id: row.id,
        eventId: row.eventId,
        deadline: world.time.now + recovery + SCHEDULE_MS + SCHEDULE_SLACK_MS,
        haltedAtCreation: world.haltedMs,
        visibleAt: world.time.now,
        origin,
        by,
        sends: new Map(),
        recordedEnd: new Map(),
        recordedBy: new Map(),
        parked: false,
        roomSince: null,
      });
    }
  }

  trackOf(deliveryId: number): DeliveryTrack | undefined {
    this.observeStore();
    return this.tracks.get(deliveryId);
  }

  /** A request went out under `claim`'s lease (send-checks.ts): its record is found by that lease when it is recorded. */
  noteSent(claim: ClaimedDelivery, send: SendRecord): void {
    this.sendsByClaim.set(`${claim.lockToken}#${claim.id}`, send);
  }

  noteClaims(instance: Instance, claims: readonly ClaimedDelivery[]): void {
    for (const claim of claims) {
      const key = `${claim.eventId}#${claim.attemptCount + 1}`;
      const list = (instance.claims.get(key) ?? []).filter((held) => this.world.store.deliveries.get(held.id)?.lockedBy === held.lockToken);
      instance.claims.set(key, [...list.filter((held) => held.id !== claim.id), claim]);
    }
  }

  noteRecording(instance: Instance, attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[]): SendRecord[] {
    return attempts.map(({ claim, record }) => {
      // An attempt skipped for an open circuit is recorded without a request: it ends when it was recorded.
      if (record.result.outcome === 'circuit_open') {
        this.checkSkip(instance, claim, record);
        return unsentRecord(instance, claim, instance.clock.globalTimeOf(record.startedAt), 'pending');
      }
      // When an event has two PENDING deliveries held by one instance, a request (which names the event, not the
      // delivery) may have been attributed to the other one: take that one's send.
      const send =
        this.sendsByClaim.get(`${claim.lockToken}#${claim.id}`) ??
        [...this.sendsByClaim.values()].find(
          (other) =>
            other.instance === instance &&
            other.eventId === claim.eventId &&
            other.attempt === claim.attemptCount + 1 &&
            other.record === 'none',
        );
      if (!send) {
        this.world.failure ??= new Error(
          `simulation: ${instance.name} records delivery ${claim.id} attempt ${claim.attemptCount + 1} it never sent`,
        );
        return unsentRecord(instance, claim, 0, 'none');
      }
      if (send.record === 'none' || send.record === 'failed') send.record = 'pending';
      return send;
    });
  }

  noteRecorded(
    attempts: readonly { claim: ClaimedDelivery; record: AttemptRecord }[],
    sends: SendRecord[],
    stored: readonly boolean[] | null,
  ): void {
    attempts.forEach(({ claim, record }, index) => {
      const send = sends[index];
      if (stored === null) {
        if (send.record !== 'stored') send.record = 'failed';
        this.world.trace(
          `  record ${claim.eventId} (delivery ${claim.id}) attempt ${send.attempt} by ${send.instance.name}: database error`,
        );
        return;
      }
      // A retry of a record whose first try committed (its answer lost) finds the lease gone: it stays stored.
      if (send.record === 'stored') return;
      send.record = stored[index] ? 'stored' : 'lost-lease';
      this.world.trace(
        `  record ${claim.eventId} (delivery ${claim.id}) attempt ${send.attempt} by ${send.instance.name}: ${stored[index] ? record.status : 'lease lost'}`,
      );
      if (!stored[index]) return;
      this.trackOf(claim.id)?.recordedEnd.set(send.attempt, send.completedAt ?? this.world.time.now);
      this.trackOf(claim.id)?.recordedBy.set(send.attempt, send.instance);
      const event = this.world.events.get(claim.eventId);
      if (record.status === DeliveryStatus.DELIVERED && event) event.deliveredAt = this.world.time.now;
    });
  }

  /**
   * An attempt skipped for an open circuit: the endpoint's latest answer before the skip, all instances together, was
   * unreachable (a timeout, a refused connection), within the longest cool-down and a probe's deadline of when its sender
   * saw it (a cool-down counts from then: seed 130267, a sender paused 55 s before its timeout fired). An answer seen by an
   * instance that no longer held the partition counts only for that instance's own skips; one whose request left within
   * the clocks' skew of a failure may count as older than that failure.
   */
  private checkSkip(instance: Instance, claim: ClaimedDelivery, record: AttemptRecord): void {
    const host = /^circuit open for (\S+) /.exec(record.result.error ?? '')?.[1];
    const endpoint = `${claim.userId} ${host}`;
    const skippedAt = instance.clock.globalTimeOf(record.startedAt);
    // An answer its sender saw after its partition lease ended (a pause took it) is known to that sender only: a non-owner
    // writes nothing for the owner (seed 138665).
    // A failure its sender saw alone (it then handed the endpoint over standing down, see noteHandingOverAlone) is known
    // to that sender only too: standing down, it withdraws what it kept of it, unless that write failed.
    const known = (this.world.receivers.answers.get(endpoint) ?? []).filter(
      (answer) =>
        answer.at <= skippedAt &&
        (answer.sender === instance ||
          (answer.owned && !(answer.alone && !this.world.circuits.keepFailedBy(answer.sender, answer.seenAt)))),
    );
    let last = known.at(-1);
    // An answer whose request left within the clocks' skew of a failure seen after it cannot be ordered against that
    // failure's opening by the engine, which compares the two instances' clocks: either may count as the latest (seed 141851).
    if (last && !last.unreachable) {
      const sentAt = last.sentAt;
      last = known.findLast((answer) => answer.unreachable && answer.seenAt + this.world.skews.seenMs >= sentAt) ?? last;
    }
    const { coolDownMs } = instance.settings.circuitBreaker;
    const within = MAX_COOL_DOWN_FACTOR * coolDownMs + TIMEOUT_MS + this.world.skews.maxMs;
    if (!last?.unreachable || skippedAt - last.seenAt > within)
      this.world.violate(
        'no-spurious-skip',
        `skip ${claim.id}#${claim.attemptCount + 1}`,
        `${instance.name} skipped delivery ${claim.id} attempt ${claim.attemptCount + 1} for an open circuit of ${endpoint} at ${atTime(skippedAt)}; ` +
          (last
            ? `its latest answer (${atTime(last.at)}, seen ${atTime(last.seenAt)}) was ${last.unreachable ? `unreachable, seen ${formatMs(skippedAt - last.seenAt)} before` : 'an answer'}`
            : 'it never answered before'),
      );
  }

  /** An instance announced a recorded attempt on `attemptRecorded` (health, metrics and auto-disable listen to it). */
  noteAnnounced(instance: Instance, deliveryId: number, attemptNumber: number): void {
    const key = `${deliveryId}#${attemptNumber}`;
    const count = (this.announced.get(key) ?? 0) + 1;
    this.announced.set(key, count);
    if (count > 1 || !this.tracks.get(deliveryId)?.recordedEnd.has(attemptNumber))
      this.world.violate(
        'announced-once',
        `announce ${key}`,
        `${instance.name} announced delivery ${deliveryId} attempt ${attemptNumber} ${count > 1 ? `${count} times` : 'which is not recorded'}`,
      );
  }

  /** At rest after the quiet phase: every recorded attempt was announced, unless its recorder crashed before it could. */
  checkAllAnnounced(): void {
    for (const track of this.tracks.values())
      for (const attempt of track.recordedEnd.keys()) {
        if (this.announced.has(`${track.id}#${attempt}`)) continue;
        const recorder = track.recordedBy.get(attempt);
        if (recorder && !recorder.alive) continue;
        this.world.violate(
          'announced-once',
          `unannounced ${track.id}#${attempt}`,
          `delivery ${track.id} attempt ${attempt} was recorded${recorder ? ` by ${recorder.name}` : ''} and never announced`,
        );
      }
  }

  /** These leases were handed back: their deliveries are claimable from now. */
  noteReleased(claims: readonly ClaimedDelivery[]): void {
    for (const claim of claims) {
      const track = this.tracks.get(claim.id);
      if (track) track.releasedAt = this.world.time.now;
    }
  }

  /**
   * A release, cancel or record of these leases failed: the engine no longer counts them (it claims them again once they
   * end), though the store still holds them leased until then, so they are not in its memory bound.
   */
  noteLeasesGivenUp(claims: readonly Pick<ClaimedDelivery, 'id' | 'lockToken'>[]): void {
    for (const claim of claims) this.leasesGivenUp.add(`${claim.lockToken}#${claim.id}`);
  }

  notePurged(eventIds: readonly string[]): void {
    for (const id of eventIds) {
      const event = this.world.events.get(id);
      if (event) event.purged = true;
    }
  }

  noteCircuitKept(instance: Instance, circuit: KeptCircuit, outcome: KeepOutcome): void {
    this.world.circuits.kept(instance, circuit, this.world.time.now, outcome);
  }

  notePartitionsGivenBack(instance: Instance, partitions: readonly number[]): void {
    this.world.circuits.gaveBack(instance, partitions, this.world.time.now);
  }

  /**
   * `instance` hands over these endpoints, which it still knows, standing down: the failures it saw on each since its last
   * answer from any receiver (and since it last took the partition: an opening it read back is another's, for all it
   * knows) are its own, while its lease still runs (else it writes nothing, and loses nothing). Within the clocks' skew
   * of that answer, the engine, which compares times of its own clock, may see them as older.
   */
  noteHandingOverAlone(instance: Instance, endpoints: readonly { readonly key: string; readonly userId: number }[]): void {
    const answeredAt = this.world.receivers.lastAnsweredAt(instance) + this.world.skews.maxMs;
    for (const { key, userId } of endpoints) {
      if (!instance.ownership.holds(userId, instance.clock.now())) continue;
      const tookAt = this.world.circuits.readAt(instance, partitionOf(userId));
      this.world.receivers.failedAlone(instance, key, Math.max(answeredAt, tookAt));
    }
  }

  noteCircuitsRead(instance: Instance, partitions: readonly number[]): void {
    this.world.circuits.read(instance, partitions, this.world.time.now);
  }
}
