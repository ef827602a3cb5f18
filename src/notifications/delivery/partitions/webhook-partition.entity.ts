import { Column, Entity, PrimaryColumn } from 'typeorm';
import { epochMs } from '../../common/database/epoch-ms.transformer';

/**
 * One partition of users and the delivering instance that holds its lease (see `PartitionLeases`): 256 rows, made by
 * the migration and never deleted. `partition` is a reserved word in MySQL, hence the column's name.
 */
@Entity({ name: 'webhook_partitions' })
export class WebhookPartition {
  /** 0 to `PARTITION_COUNT` − 1 (`partitionOf(userId)`). */
  @PrimaryColumn({ name: 'user_partition', type: 'smallint' })
  partition: number;

  /** The instance holding the lease; null when none was ever taken or it was given back. */
  @Column({ type: 'varchar', length: 64, nullable: true })
  holder: string | null;

  /** The lease runs until this time (epoch ms, the holder's clock); 0 once given back (free for every clock). */
  @Column({ name: 'lease_until', type: 'bigint', default: 0, transformer: epochMs })
  leaseUntil: number;

  /** Counts takes: a renewal names the epoch it holds, so it never extends a lease another instance took since. */
  @Column({ type: 'int', default: 0 })
  epoch: number;
}
