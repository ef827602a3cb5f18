import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { isMySql } from '../../common/database/is-mysql';
import { DELIVERY_SETTINGS, type DeliverySettings } from '../delivery-settings';
import type { AliveInstance } from './egress-watch';
import type { KeptCircuit } from './kept-circuit';
import { type PartitionLease, PartitionLeases } from './partition-leases';
import { partitionOf } from './partitions';

/** An instance whose heartbeat ended this long ago is forgotten (its row deleted): long past any lease it held. */
const FORGET_AFTER_MS = 60 * 60_000;

/**
 * The partition leases in SQL (`webhook_partitions`, `webhook_delivery_instances`). Every write is one conditional
 * statement, so two instances taking or renewing the same partitions at once never both get one: the second UPDATE
 * waits for the first's row lock, then finds the row no longer matching. A write is then read back (a MySQL UPDATE
 * counts rows changed, not which ones).
 */
@Injectable()
export class PartitionLeaseRepository extends PartitionLeases {
  readonly shared: boolean;

  /** Where this process can be woken (`delivery.wakeUrl`), written with its heartbeat; null: it polls only. */
  private readonly wakeUrl: string | null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Optional() @Inject(DELIVERY_SETTINGS) settings?: DeliverySettings,
  ) {
    super();
    this.shared = isMySql(dataSource);
    this.wakeUrl = settings?.wakeUrl ?? null;
  }

  async heartbeat(holder: string, now: number, until: number, answeredAt: number | null): Promise<AliveInstance[]> {
    await this.write(
      this.shared
        ? 'INSERT INTO webhook_delivery_instances (holder, alive_until, answered_at, wake_url) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE alive_until = VALUES(alive_until), answered_at = VALUES(answered_at), wake_url = VALUES(wake_url)'
        : 'INSERT INTO webhook_delivery_instances (holder, alive_until, answered_at, wake_url) VALUES (?, ?, ?, ?) ON CONFLICT (holder) DO UPDATE SET alive_until = excluded.alive_until, answered_at = excluded.answered_at, wake_url = excluded.wake_url',
      [holder, until, answeredAt, this.wakeUrl],
    );
    await this.write('DELETE FROM webhook_delivery_instances WHERE alive_until < ?', [now - FORGET_AFTER_MS]);
    const rows = await this.dataSource.query<{ holder: string; alive_until: number | string; answered_at: number | string | null }[]>(
      'SELECT holder, alive_until, answered_at FROM webhook_delivery_instances WHERE alive_until > ? ORDER BY holder',
      [now],
    );
    return rows.map((row) => ({
      holder: row.holder,
      aliveUntil: Number(row.alive_until),
      answeredAt: row.answered_at === null ? null : Number(row.answered_at),
    }));
  }

  async wakeUrls(now: number): Promise<ReadonlyMap<number, string>> {
    const rows = await this.dataSource.query<{ user_partition: number | string; wake_url: string }[]>(
      'SELECT p.user_partition, i.wake_url FROM webhook_partitions p JOIN webhook_delivery_instances i ON i.holder = p.holder ' +
        'WHERE p.lease_until > ? AND i.alive_until > ? AND i.wake_url IS NOT NULL',
      [now, now],
    );
    return new Map(rows.map((row) => [Number(row.user_partition), row.wake_url]));
  }

  async renew(holder: string, held: readonly PartitionLease[], now: number, until: number): Promise<PartitionLease[]> {
    if (held.length === 0) return [];
    const [sameEpoch, epochs] = leaseList(held);
    await this.write(`UPDATE webhook_partitions SET lease_until = ? WHERE holder = ? AND lease_until >= ? AND ${sameEpoch}`, [
      until,
      holder,
      now,
      ...epochs,
    ]);
    return this.heldWith(holder, until, sameEpoch, epochs);
  }

  async take(holder: string, partitions: readonly number[], now: number, until: number): Promise<PartitionLease[]> {
    if (partitions.length === 0) return [];
    const [among, ids] = partitionList(partitions);
    await this.write(
      `UPDATE webhook_partitions SET holder = ?, lease_until = ?, epoch = epoch + 1 WHERE ${among} AND (holder IS NULL OR lease_until < ? OR holder = ?)`,
      [holder, until, ...ids, now, holder],
    );
    return this.heldWith(holder, until, among, ids);
  }

  async release(holder: string, partitions: readonly number[]): Promise<void> {
    if (partitions.length === 0) return;
    const [among, ids] = partitionList(partitions);
    await this.write(`UPDATE webhook_partitions SET holder = NULL, lease_until = 0 WHERE holder = ? AND ${among}`, [holder, ...ids]);
  }

  async leave(holder: string): Promise<void> {
    await this.write('UPDATE webhook_partitions SET holder = NULL, lease_until = 0 WHERE holder = ?', [holder]);
    await this.write('DELETE FROM webhook_delivery_instances WHERE holder = ?', [holder]);
  }

  async keepCircuit({ userId, host, state, forgetAfter }: KeptCircuit, holder: string, lease: PartitionLease): Promise<void> {
    const owned = 'SELECT 1 FROM webhook_partitions WHERE user_partition = ? AND holder = ? AND epoch = ?';
    const ownedBy = [lease.partition, holder, lease.epoch];
    if (!state)
      return this.write(`DELETE FROM webhook_endpoint_circuits WHERE user_id = ? AND host = ? AND EXISTS (${owned})`, [
        userId,
        host,
        ...ownedBy,
      ]);
    const columns = ['failures', 'open_until', 'cool_down_ms', 'last_failure_at', 'forget_after'];
    const update = this.shared
      ? columns.map((column) => `${column} = VALUES(${column})`).join(', ')
      : columns.map((column) => `${column} = excluded.${column}`).join(', ');
    // One statement: the partition's row, read by the INSERT … SELECT, is locked against a take until it commits.
    await this.write(
      `INSERT INTO webhook_endpoint_circuits (user_id, host, user_partition, ${columns.join(', ')}) ` +
        `SELECT ?, ?, ?, ?, ?, ?, ?, ? FROM webhook_partitions WHERE user_partition = ? AND holder = ? AND epoch = ? ${
          this.shared ? 'ON DUPLICATE KEY UPDATE' : 'ON CONFLICT (user_id, host) DO UPDATE SET'
        } ${update}`,
      [userId, host, partitionOf(userId), state.failures, state.openUntil, state.coolDownMs, state.lastFailureAt, forgetAfter, ...ownedBy],
    );
  }

  async circuitsOf(partitions: readonly number[], now: number): Promise<KeptCircuit[]> {
    if (partitions.length === 0) return [];
    const [among, ids] = partitionList(partitions);
    await this.write(`DELETE FROM webhook_endpoint_circuits WHERE ${among} AND forget_after <= ?`, [...ids, now]);
    const rows = await this.dataSource.query<Record<string, string | number | null>[]>(
      `SELECT user_id, host, failures, open_until, cool_down_ms, last_failure_at, forget_after FROM webhook_endpoint_circuits WHERE ${among}`,
      ids,
    );
    return rows.map((row) => {
      return {
        userId: Number(row.user_id),
        host: String(row.host),
        state: {
          failures: Number(row.failures),
          openUntil: row.open_until === null ? null : Number(row.open_until),
          coolDownMs: Number(row.cool_down_ms),
          lastFailureAt: Number(row.last_failure_at),
        },
        forgetAfter: Number(row.forget_after),
      };
    });
  }

  /** Those partitions matching `condition` that `holder` holds until exactly `until`: what a take or renewal just wrote. */
  private async heldWith(holder: string, until: number, condition: string, params: readonly unknown[]): Promise<PartitionLease[]> {
    const rows = await this.dataSource.query<{ user_partition: number | string; epoch: number | string }[]>(
      `SELECT user_partition, epoch FROM webhook_partitions WHERE holder = ? AND lease_until = ? AND ${condition} ORDER BY user_partition`,
      [holder, until, ...params],
    );
    return rows.map((row) => ({ partition: Number(row.user_partition), epoch: Number(row.epoch) }));
  }

  /**
   * A write outside any transaction: on MySQL/MariaDB it autocommits; on SQLite it takes its turn among the
   * transactions (the one connection may be inside a host's, whose rollback would undo it).
   */
  private async write(sql: string, params: readonly unknown[]): Promise<void> {
    if (this.shared) await this.dataSource.query(sql, [...params]);
    else await this.dataSource.transaction((manager) => manager.query(sql, [...params]));
  }
}

/** `user_partition IN (…)` and its parameters. */
function partitionList(partitions: readonly number[]): [string, number[]] {
  return [`user_partition IN (${partitions.map(() => '?').join(', ')})`, [...partitions]];
}

/** `(user_partition, epoch) IN (…)` (a row value: MariaDB, MySQL and SQLite ≥ 3.15) and its parameters. */
function leaseList(leases: readonly PartitionLease[]): [string, number[]] {
  return [
    `(user_partition, epoch) IN (${leases.map(() => '(?, ?)').join(', ')})`,
    leases.flatMap((lease) => [lease.partition, lease.epoch]),
  ];
}
