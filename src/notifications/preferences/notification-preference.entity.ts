import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { EventType, NotificationChannel } from '../catalog/event-catalog';
import { MAX_WEBHOOK_URL_LENGTH } from '../url-policy/webhook-url-policy';

/** A user's explicit choice for one event type on one channel. */
@Entity({ name: 'notification_preferences' })
@Index('uq_notification_preferences_user_type_channel', ['userId', 'type', 'channel'], { unique: true })
export class NotificationPreference {
  @PrimaryGeneratedColumn({ type: 'integer' })
  id: number;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  @Column({ type: 'varchar', length: 64 })
  type: EventType;

  @Column({ type: 'varchar', length: 16 })
  channel: NotificationChannel;

  @Column({ type: 'boolean' })
  enabled: boolean;

  @Column({ name: 'webhook_url', type: 'varchar', length: MAX_WEBHOOK_URL_LENGTH, nullable: true })
  webhookUrl: string | null;

  /** WEBHOOK rows with a URL: the user's stream of that URL (`webhook_streams`), which numbers and orders its deliveries. */
  @Column({ name: 'stream_id', type: 'integer', nullable: true })
  streamId: number | null;

  /** WEBHOOK rows: which schemes sign its deliveries (`hmac`, `ed25519` or `hmac,ed25519`; see `SignatureScheme`). */
  @Column({ name: 'signature_schemes', type: 'varchar', length: 32, default: 'hmac' })
  signatureSchemes: string;

  /** Deliveries in a row that ended FAILED since the last DELIVERED (counted only while auto-disable is on). */
  @Column({ name: 'consecutive_failures', type: 'integer', default: 0 })
  consecutiveFailures: number;

  /** Why the service disabled this webhook by itself; cleared when the user enables it again. */
  @Column({ name: 'disabled_reason', type: 'varchar', length: 255, nullable: true })
  disabledReason: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime' })
  updatedAt: Date;
}
