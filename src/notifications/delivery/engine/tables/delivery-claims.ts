import type { EntityManager, QueryResult, SelectQueryBuilder } from 'typeorm';
import { type Ownership, PARTITION_COUNT } from '../../partitions/partitions';
import { DeliveryStatus, WebhookDelivery } from '../../entities/webhook-delivery.entity';
import type { Lease } from '../outbox-store';
import { dueDeliveries } from '../due-deliveries';

/**
 * The claim's statements on `webhook_deliveries`: which due rows an owner may take (its partitions, as memory says and as
 * `webhook_partitions` says), `FOR UPDATE SKIP LOCKED` of those chosen, and the conditional UPDATE that leases them.
 */

/**
 * A delivery whose turn it is: in an ordered stream, only the first PENDING one (the lowest id: rows enter a stream in
 * commit order, its lock held by every insert) may be claimed; the ones behind it wait until it is DELIVERED, FAILED or
 * CANCELLED. A plain read of the stream's rows (index `ix_webhook_deliveries_stream`), which a claim's `FOR UPDATE SKIP
 * LOCKED` does not lock: a locking clause of the outer query does not reach into a subquery.
 */
const IN_TURN =
  'NOT EXISTS (SELECT 1 FROM webhook_streams st INNER JOIN webhook_deliveries earlier ON earlier.stream_id = st.id ' +
  "AND earlier.status = 'PENDING' AND earlier.id < d.id WHERE st.id = d.stream_id AND st.ordered = 1)";

const DUE_BY_PARTITION = 'ix_webhook_deliveries_partition_due';
const DUE_IN_ORDER = 'ix_webhook_deliveries_due';
/** Owning at least 1 / WIDE_SHARE of the partitions, a claim scans the due index in order ({@link DUE_IN_ORDER}). */
const WIDE_SHARE = 4;
/**
 * A partition whose lease `:holder` holds past `:leasedPast` (running until then at least, as a renewal counts it; a
 * take waits until it has passed): the claim's condition on `webhook_partitions`.
 */
const HELD_PARTITIONS = 'FROM webhook_partitions p WHERE p.holder = :holder AND p.lease_until > :leasedPast';

/**
 * The due free deliveries in their turn of the partitions `owned` names, as memory says (`mysql`: the server is
 * MySQL/MariaDB, which is told the index to read). {@link leaseRows} checks the partitions table agrees; with
 * `checkHeld`, this read does too (it locks nothing).
 */
export function ownedDue(
  manager: EntityManager,
  now: number,
  owned: Ownership,
  { mysql, checkHeld = false }: { mysql: boolean; checkHeld?: boolean },
): SelectQueryBuilder<WebhookDelivery> {
  const due = dueDeliveries(manager, now).andWhere(IN_TURN);
  if (owned === 'all') return due;
  // No partition: a condition no row meets (an empty IN list is not SQL).
  if (owned.partitions.length === 0) return due.andWhere('1 = 0');
  // A claim reads in due order up to its limit. Owning a wide share (one instance, or a few), the due index gives the rows
  // in that order and about that share of them are this instance's: it stops near the limit. Owning a narrow share, the
  // partitions' due index reads only theirs, but all of them, to sort: at every claim of a large backlog, the whole of it.
  if (mysql) due.useIndex(owned.partitions.length * WIDE_SHARE >= PARTITION_COUNT ? DUE_IN_ORDER : DUE_BY_PARTITION);
  due.andWhere('d.partition IN (:...partitions)', { partitions: owned.partitions });
  if (checkHeld)
    due.andWhere(`d.partition IN (SELECT p.user_partition ${HELD_PARTITIONS})`, { holder: owned.holder, leasedPast: owned.leasedPast });
  return due;
}

/**
 * Of the deliveries `ids`, those no other transaction holds, locked until this one ends (`FOR UPDATE SKIP LOCKED`, by
 * primary key). The claim's scan itself does not lock: a locking range scan also locks the first row past its range
 * (InnoDB, at READ COMMITTED too), which is another partition's, and its owner's claim would skip it and report nothing
 * due (seen as a wake-up that claimed nothing, the delivery waiting for the owner's next poll).
 */
export async function lockFree(manager: EntityManager, ids: readonly number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await manager
    .createQueryBuilder(WebhookDelivery, 'd')
    .select('d.id', 'id')
    .where('d.id IN (:...ids)', { ids })
    .setLock('pessimistic_write')
    .setOnLocked('skip_locked')
    .getRawMany<{ id: number | string }>();
  return rows.map((row) => Number(row.id));
}

/**
 * The claim's conditional UPDATE: leases those of `ids` still due and free and, with an owner, of a partition whose
 * lease it holds as the partitions table says; how many. On MySQL/MariaDB it reads the rows by primary key. Given the
 * choice, the optimizer reads a status index when the rows claimed are most of the PENDING ones (a quiet outbox), and
 * that range scan locks until commit the due rows of other partitions it passes (MariaDB 10.11, at READ COMMITTED too):
 * their owner's claim meanwhile skips them (SKIP LOCKED) and leases nothing, its deliveries waiting for its next poll.
 */
export async function leaseRows(
  manager: EntityManager,
  ids: readonly number[],
  lease: Lease,
  owned: Ownership,
  { mysql }: { mysql: boolean },
): Promise<number> {
  const byPrimaryKey = mysql ? ' FORCE INDEX (PRIMARY)' : '';
  const held = owned === 'all' ? '' : ` AND EXISTS (SELECT 1 ${HELD_PARTITIONS} AND p.user_partition = webhook_deliveries.user_partition)`;
  const [sql, parameters] = manager.connection.driver.escapeQueryWithParameters(
    `UPDATE webhook_deliveries${byPrimaryKey} SET locked_by = :token, locked_until = :until ` +
      'WHERE id IN (:...ids) AND status = :pending AND next_attempt_at <= :now AND (locked_until IS NULL OR locked_until < :now)' +
      held,
    {
      ids,
      token: lease.token,
      until: lease.until,
      now: lease.now,
      pending: DeliveryStatus.PENDING,
      ...(owned === 'all' ? {} : { holder: owned.holder, leasedPast: owned.leasedPast }),
    },
  );
  const result: QueryResult = await manager.queryRunner!.query(sql, parameters, true);
  return result.affected ?? ids.length;
}
