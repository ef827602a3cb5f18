import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { epochMs } from '../../common/database/epoch-ms.transformer';
import type { AttemptOutcome } from '../http/webhook-sender';

/** One HTTP attempt of a delivery, kept for the delivery log. */
@Entity({ name: 'webhook_delivery_attempts' })
@Index('ix_webhook_delivery_attempts_delivery', ['deliveryId'])
export class WebhookDeliveryAttempt {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ name: 'delivery_id', type: 'integer' })
  deliveryId: number;

  @Column({ name: 'attempt_number', type: 'integer' })
  attemptNumber: number;

  @Column({ name: 'started_at', type: 'bigint', transformer: epochMs })
  startedAt: number;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  @Column({ type: 'varchar', length: 16 })
  outcome: AttemptOutcome;

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode: number | null;

  @Column({ type: 'varchar', length: 512, nullable: true })
  error: string | null;

  @Column({ name: 'response_excerpt', type: 'text', nullable: true })
  responseExcerpt: string | null;
}
