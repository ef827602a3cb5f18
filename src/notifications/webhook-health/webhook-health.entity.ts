import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { EventType } from '../catalog/event-catalog';
import { epochMs } from '../common/database/epoch-ms.transformer';

/** The longest error text a health row keeps (the delivery log keeps 512). */
export const HEALTH_ERROR_LENGTH = 255;

/**
 * How one webhook (a user's event type) is doing, as observed from its recorded attempts, all instances together.
 * Written off the delivery path, in batches (`WebhookHealthRecorder`); read by the settings API. Times are epoch ms.
 */
@Entity({ name: 'webhook_health' })
export class WebhookHealth {
  @PrimaryColumn({ name: 'user_id', type: 'integer' })
  userId: number;

  @PrimaryColumn({ type: 'varchar', length: 64 })
  type: EventType;

  /** Attempts in a row that failed (a request was made, or refused before one) since the last 2xx. */
  @Column({ name: 'failed_attempts_in_row', type: 'integer', default: 0 })
  failedAttemptsInRow: number;

  /** When the first of those failed attempts started; null while there are none. */
  @Column({ name: 'failing_since', type: 'bigint', nullable: true, transformer: epochMs })
  failingSince: number | null;

  @Column({ name: 'last_attempt_at', type: 'bigint', nullable: true, transformer: epochMs })
  lastAttemptAt: number | null;

  @Column({ name: 'last_outcome', type: 'varchar', length: 32, nullable: true })
  lastOutcome: string | null;

  @Column({ name: 'last_status_code', type: 'integer', nullable: true })
  lastStatusCode: number | null;

  @Column({ name: 'last_error', type: 'varchar', length: HEALTH_ERROR_LENGTH, nullable: true })
  lastError: string | null;

  @Column({ name: 'last_success_at', type: 'bigint', nullable: true, transformer: epochMs })
  lastSuccessAt: number | null;

  /** Set when attempts were skipped for an open circuit: until when; cleared by the next 2xx. */
  @Column({ name: 'circuit_open_until', type: 'bigint', nullable: true, transformer: epochMs })
  circuitOpenUntil: number | null;

  /** When auto-disable last turned the webhook off. */
  @Column({ name: 'disabled_at', type: 'bigint', nullable: true, transformer: epochMs })
  disabledAt: number | null;

  @Column({ name: 'updated_at', type: 'bigint', transformer: epochMs })
  updatedAt: number;
}
