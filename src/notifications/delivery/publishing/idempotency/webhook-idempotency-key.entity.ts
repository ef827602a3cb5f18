import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { epochMs } from '../../../common/database/epoch-ms.transformer';

/**
 * A publish made with an `Idempotency-Key`: what it answered, so that a retry with the same key and the same events
 * answers the same, and stores and sends nothing new. Committed in the publish's transaction (with its events, or
 * with the host's rows), so a rolled-back publish leaves no key. Retention deletes it after the window (24 h by default).
 */
@Entity({ name: 'webhook_idempotency_keys' })
export class WebhookIdempotencyKey {
  /** Whose key it is: `internal:<hash of the internal API token>` for the internal endpoint, `host` in-process. */
  @PrimaryColumn({ type: 'varchar', length: 64 })
  scope: string;

  @PrimaryColumn({ name: 'idempotency_key', type: 'varchar', length: 255 })
  key: string;

  /** SHA-256 (hex) of the canonical events: a key sent again with other events is refused (409). */
  @Column({ name: 'request_hash', type: 'varchar', length: 64 })
  requestHash: string;

  /** The first call's event ids, in order, as a JSON array. */
  @Column({ name: 'event_ids', type: 'text' })
  eventIds: string;

  @Column({ name: 'queued_deliveries', type: 'integer' })
  queuedDeliveries: number;

  @Index('ix_webhook_idempotency_keys_created_at')
  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs })
  createdAt: number;
}
