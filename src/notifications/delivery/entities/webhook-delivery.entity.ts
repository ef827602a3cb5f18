import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import type { EventType } from '../../catalog/event-catalog';
import { epochMs } from '../../common/database/epoch-ms.transformer';

export enum DeliveryStatus {
  PENDING = 'PENDING',
  DELIVERED = 'DELIVERED',
  FAILED = 'FAILED',
  CANCELLED = 'CANCELLED',
}

/** One attempt cycle (up to 6 attempts) of one event to one user's webhook. The outbox row. */
@Entity({ name: 'webhook_deliveries' })
@Index('ix_webhook_deliveries_due', ['status', 'nextAttemptAt'])
@Index('ix_webhook_deliveries_partition_due', ['status', 'partition', 'nextAttemptAt'])
@Index('ix_webhook_deliveries_user', ['userId', 'id'])
@Index('ix_webhook_deliveries_user_status', ['userId', 'status', 'id'])
@Index('ix_webhook_deliveries_user_type', ['userId', 'type', 'id'])
@Index('ix_webhook_deliveries_lock', ['lockedBy'])
@Index('ix_webhook_deliveries_retention', ['status', 'updatedAt'])
@Index('ix_webhook_deliveries_event', ['eventId'])
@Index('ix_webhook_deliveries_stream', ['streamId', 'status', 'id'])
export class WebhookDelivery {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ name: 'event_id', type: 'varchar', length: 36 })
  eventId: string;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  /** `partitionOf(userId)`, written with the row: only the instance holding this partition's lease claims the delivery. */
  @Column({ name: 'user_partition', type: 'smallint' })
  partition: number;

  @Column({ type: 'varchar', length: 64 })
  type: EventType;

  @Column({ type: 'varchar', length: 16 })
  status: DeliveryStatus;

  /** The user's stream of the webhook URL it was published to (`webhook_streams`); null for deliveries from before streams. */
  @Column({ name: 'stream_id', type: 'integer', nullable: true })
  streamId: number | null;

  /** Its number in the stream, given at publish, kept by redeliveries and recoveries; sent as `X-Service-Sequence`. */
  @Column({ type: 'bigint', nullable: true, transformer: epochMs }) // a BIGINT as a number
  sequence: number | null;

  @Column({ name: 'attempt_count', type: 'integer', default: 0 })
  attemptCount: number;

  @Column({ name: 'next_attempt_at', type: 'bigint', nullable: true, transformer: epochMs })
  nextAttemptAt: number | null;

  /** The claim token of the worker that owns the delivery until `lockedUntil`. */
  @Column({ name: 'locked_by', type: 'varchar', length: 36, nullable: true })
  lockedBy: string | null;

  @Column({ name: 'locked_until', type: 'bigint', nullable: true, transformer: epochMs })
  lockedUntil: number | null;

  @Column({ name: 'last_status_code', type: 'integer', nullable: true })
  lastStatusCode: number | null;

  @Column({ name: 'last_error', type: 'varchar', length: 512, nullable: true })
  lastError: string | null;

  /** Why the delivery waits beyond its schedule (its endpoint's circuit is open); cleared by its next attempt. */
  @Column({ name: 'waiting_reason', type: 'varchar', length: 255, nullable: true })
  waitingReason: string | null;

  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs })
  createdAt: number;

  @Column({ name: 'updated_at', type: 'bigint', transformer: epochMs })
  updatedAt: number;
}
