import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { epochMs } from '../../common/database/epoch-ms.transformer';

/**
 * An endpoint's circuit (one user's URLs on one host) as its last owner kept it: what the next owner of the user's
 * partition starts from. Written as the circuit opens, opens again or closes (the row is deleted), and as the partition
 * moves away while the endpoint still fails; read when a partition is taken. A row past `forgetAfter` no longer matters.
 */
@Entity({ name: 'webhook_endpoint_circuits' })
@Index('ix_webhook_endpoint_circuits_partition', ['partition'])
export class WebhookEndpointCircuit {
  @PrimaryColumn({ name: 'user_id', type: 'integer' })
  userId: number;

  /** The URL's host (name and port), as the engine's endpoint key has it. */
  @PrimaryColumn({ type: 'varchar', length: 255 })
  host: string;

  @Column({ name: 'user_partition', type: 'smallint' })
  partition: number;

  @Column({ type: 'int' })
  failures: number;

  @Column({ name: 'open_until', type: 'bigint', nullable: true, transformer: epochMs })
  openUntil: number | null;

  @Column({ name: 'cool_down_ms', type: 'int' })
  coolDownMs: number;

  @Column({ name: 'last_failure_at', type: 'bigint', transformer: epochMs })
  lastFailureAt: number;

  @Column({ name: 'forget_after', type: 'bigint', transformer: epochMs })
  forgetAfter: number;
}
