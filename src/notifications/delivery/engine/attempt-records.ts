import { Logger } from '@nestjs/common';
import type { Clock } from '../../clock/clock';
import { MAX_CLOCK_SKEW_MS } from '../delivery-settings';
import { GroupCommit } from '../../common/concurrency/group-commit';
import type { DeliveryEvents } from '../events/delivery-events.service';
import type { InstanceCapacity } from './instance-capacity';
import type { AttemptRecord, ClaimedDelivery, OutboxStore } from './outbox-store';
import type { WakeUps } from './wake-ups';

/** A failed record is tried again after this long, doubling up to {@link RECORD_RETRY_MAX_MS}, while its lease holds. */
const RECORD_RETRY_MS = 100;
const RECORD_RETRY_MAX_MS = 1_000;
/**
 * Two record groups commit at once, so a record never waits for a slow commit ahead of it: one stalled commit would
 * otherwise add its whole stall to every record behind it, past the record budget its lease leaves room for.
 */
const RECORD_CONCURRENCY = 2;
/**
 * A record group waits this long for company when it starts: at low rates each attempt would otherwise pay a transaction
 * of its own, at 200 attempts/s about four share one. Records are off the path to the receiver (the
 * slot is freed when the answer arrives); this is well inside the record budget the lease leaves room for.
 */
const RECORD_LINGER_MS = 20;

/**
 * The records of an instance's attempts (made, or skipped for an open circuit): group-committed, two groups at once,
 * retried when a group fails, and told to the host (`attemptRecorded`) once stored. A record's lease counts against the
 * instance's room until the record is done.
 */
export class AttemptRecords {
  private readonly logger = new Logger('WebhookDelivery');
  private readonly groups: GroupCommit<{ claim: ClaimedDelivery; record: AttemptRecord }, boolean>;

  constructor(
    private readonly outbox: OutboxStore,
    private readonly clock: Clock,
    private readonly events: DeliveryEvents,
    batchSize: number,
    private readonly room: { readonly capacity: InstanceCapacity; readonly wakeUps: WakeUps },
  ) {
    this.groups = new GroupCommit((attempts) => this.outbox.recordAttempts(attempts), {
      maxGroupSize: batchSize,
      concurrency: RECORD_CONCURRENCY,
      linger: { ms: RECORD_LINGER_MS, wait: (ms) => new Promise<void>((resolve) => this.clock.setTimeout(resolve, ms)) },
    });
  }

  /** Resolves when the records submitted so far are committed (or given up). */
  idle(): Promise<void> {
    return this.groups.idle();
  }

  /**
   * Records an attempt (made or skipped); its lease is held until the record commits, so it counts against the room from
   * this call (synchronously, before any await) until then.
   */
  async record(claim: ClaimedDelivery, record: AttemptRecord, webhookUrl: string): Promise<void> {
    this.room.capacity.enter('settle', 1);
    try {
      await this.store(claim, record, webhookUrl);
    } finally {
      this.room.capacity.leave('settle', 1);
      void this.room.wakeUps.wake('room');
    }
  }

  /** Stores the record (retried), then tells the host; a lease lost meanwhile is logged, not stored. */
  private async store(claim: ClaimedDelivery, record: AttemptRecord, webhookUrl: string): Promise<void> {
    let stored: boolean;
    try {
      stored = await this.submit(claim, record);
    } catch (error) {
      this.room.wakeUps.leaseGivenUp(claim.lockedUntil); // the delivery is attempted again when its lease ends, by any instance
      throw error;
    }
    if (!stored) {
      this.logger.warn(`Delivery ${claim.id}: lease lost before the attempt was recorded`);
      return;
    }
    const { id: deliveryId, eventId, userId, type, attemptCount } = claim;
    const { result, status } = record;
    const { outcome, durationMs, statusCode, error } = result;
    this.events.emit('attemptRecorded', {
      deliveryId,
      eventId,
      userId,
      type,
      attemptNumber: attemptCount + 1,
      outcome,
      durationMs,
      statusCode,
      status,
      attemptedAt: record.startedAt,
      error,
      circuitOpenUntil: result.circuitOpenUntil ?? null,
      webhookUrl,
    });
  }

  /**
   * Stores the attempt; a failed record (an outage, a deadlock, a lost connection, an answer lost after its commit) is
   * retried until its lease has surely ended (its end plus the clock skew we tolerate). The record is guarded by the
   * lease token: a retry is stored only while no other instance has taken the delivery, so a database away for less
   * than the lease sends nothing twice. A retry of a record whose earlier try committed is answered as stored (the
   * store finds the attempt), so it is announced once, also when that try was the last one inside the lease (seed 90:
   * a pause held the first try past the lease, its commit's answer was lost, and it was never announced).
   */
  private async submit(claim: ClaimedDelivery, record: AttemptRecord): Promise<boolean> {
    const giveUpAt = claim.lockedUntil + MAX_CLOCK_SKEW_MS;
    for (let retry = 0; ; retry++) {
      try {
        return await this.groups.submit({ claim, record });
      } catch (error) {
        // One retry at least, even past the lease (a pause held the first try until then): its answer tells whether the
        // failed try was stored after all (announced once), or not (the lease is gone: it is not stored now either).
        const wait = Math.min(
          RECORD_RETRY_MS * 2 ** retry,
          RECORD_RETRY_MAX_MS,
          Math.max(giveUpAt - this.clock.now(), retry === 0 ? RECORD_RETRY_MS : 0),
        );
        if (wait <= 0) throw error;
        if (retry === 0)
          this.logger.warn(
            `Delivery ${claim.id}: attempt not recorded (${(error as Error).message}); retrying until its lease ends in ${Math.round((claim.lockedUntil - this.clock.now()) / 1000)} s`,
          );
        await new Promise<void>((resolve) => this.clock.setTimeout(resolve, wait));
      }
    }
  }
}
