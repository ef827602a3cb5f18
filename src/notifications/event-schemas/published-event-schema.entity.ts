import { Column, Entity, PrimaryColumn } from 'typeorm';
import { epochMs } from '../common/database/epoch-ms.transformer';

/**
 * The payload schema an event type was published with, per version: what receivers generated their models from. A
 * later start that changes a published version so that it removes, retypes or makes optional a field is refused.
 */
@Entity({ name: 'webhook_event_schemas' })
export class PublishedEventSchema {
  @PrimaryColumn({ name: 'event_type', type: 'varchar', length: 64 })
  type: string;

  @PrimaryColumn({ type: 'integer' })
  version: number;

  /** The JSON Schema, as JSON: the last one started with under this version (each compatible with the ones before). */
  @Column({ type: 'text' })
  schema: string;

  /** When this version was first published. */
  @Column({ name: 'published_at', type: 'bigint', transformer: epochMs })
  publishedAt: number;

  /** When its schema was last replaced by a compatible one (the first publish's time until then). */
  @Column({ name: 'updated_at', type: 'bigint', transformer: epochMs })
  updatedAt: number;
}
