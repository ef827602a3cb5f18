import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { EventType } from '../../catalog/event-catalog';
import { epochMs } from '../../common/database/epoch-ms.transformer';

/** One published event that has webhook deliveries; `body` holds the exact bytes every attempt sends. */
@Entity({ name: 'webhook_events' })
export class WebhookEvent {
  /** Stable across retries and redeliveries: receivers deduplicate on it. */
  @PrimaryColumn({ type: 'varchar', length: 36 })
  id: string;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  @Column({ type: 'varchar', length: 64 })
  type: EventType;

  @Column({ type: 'text' })
  body: string;

  @Column({ name: 'created_at', type: 'bigint', transformer: epochMs })
  createdAt: number;

  /** The W3C `traceparent` (version 00) the attempts are child spans of, when the event was published in a trace. */
  @Column({ type: 'varchar', length: 55, nullable: true })
  traceparent: string | null;

  /** The W3C `tracestate` that came with it, forwarded unchanged. */
  @Column({ type: 'varchar', length: 512, nullable: true })
  tracestate: string | null;

  /** Set by retention when it purges a DELIVERED delivery of this event: recover never sends it again. */
  @Column({ name: 'was_delivered', type: 'boolean', default: false })
  wasDelivered: boolean;
}
