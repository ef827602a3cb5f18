import { Column, Entity, PrimaryColumn } from 'typeorm';
import { epochMs } from '../../common/database/epoch-ms.transformer';

/**
 * A delivering instance and how long it says it is alive (its heartbeat): the holders among which the partitions are
 * shared, and whether receivers answer them (an instance that reaches none while another does stands down). A row whose time passed long ago is deleted by the next heartbeat of any instance.
 */
@Entity({ name: 'webhook_delivery_instances' })
export class WebhookDeliveryInstance {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  holder: string;

  @Column({ name: 'alive_until', type: 'bigint', transformer: epochMs })
  aliveUntil: number;

  /** When a receiver last answered this instance (any HTTP status), on its clock; null before the first answer. */
  @Column({ name: 'answered_at', type: 'bigint', nullable: true, transformer: epochMs })
  answeredAt: number | null;

  /** Where this instance can be woken when another publishes for a partition it owns (`delivery.wakeUrl`); null: it polls only. */
  @Column({ name: 'wake_url', type: 'varchar', length: 2048, nullable: true })
  wakeUrl: string | null;
}
