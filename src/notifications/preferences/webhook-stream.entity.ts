import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { epochMs } from '../common/database/epoch-ms.transformer';

/**
 * A user's deliveries to one webhook URL, numbered in publish order: every delivery gets the next `sequence` of its
 * stream in its publish transaction (the row's lock orders concurrent publishes), and an `ordered` stream delivers one at
 * a time, each once the one before it is final. Shared by the user's webhooks (event types) that post to that URL.
 */
@Entity({ name: 'webhook_streams' })
@Index('uq_webhook_streams_user_url', ['userId', 'urlHash'], { unique: true })
export class WebhookStream {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  /** SHA-256 (hex) of the URL as stored: a URL of up to 2048 characters is too long for a unique index on MySQL. */
  @Column({ name: 'url_hash', type: 'varchar', length: 64 })
  urlHash: string;

  /** The number of the latest delivery published to the stream (0 before the first). */
  @Column({ name: 'last_sequence', type: 'bigint', default: 0, transformer: epochMs }) // a BIGINT as a number
  lastSequence: number;

  /** Ordered delivery: a delivery starts only once the one queued before it is DELIVERED, FAILED or CANCELLED. */
  @Column({ type: 'boolean', default: false })
  ordered: boolean;
}
