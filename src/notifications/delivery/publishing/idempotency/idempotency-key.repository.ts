import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, EntityManager } from 'typeorm';
import { isMySql } from '../../../common/database/is-mysql';
import { shortTransaction } from '../../../common/database/short-transaction';
import { WebhookIdempotencyKey } from './webhook-idempotency-key.entity';

/** One producer's key. */
export interface ScopedKey {
  readonly scope: string;
  readonly key: string;
}

/** What a keyed publish answered, as stored with its key. */
export interface KeyedPublish extends ScopedKey {
  readonly requestHash: string;
  readonly eventIds: readonly string[];
  readonly queuedDeliveries: number;
  readonly createdAt: number;
  /** A row of this key older than the window is stored: the insert replaces it. */
  readonly replacesExpired?: boolean;
}

/**
 * The idempotency keys of publishes (`webhook_idempotency_keys`), beside the outbox rather than in the engine's
 * `OutboxStore`: the engine never reads them, and a key is written in the same transaction as the events (the
 * publisher's `manager`, or the host's), which is all the engine's transactions need to know of it.
 */
@Injectable()
export class IdempotencyKeyRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The stored publish of a key, however old (the caller decides whether it is still within the window), read through
   * the host's `manager` when given. Without it, on SQLite, the read takes its turn among the transactions: on the one
   * connection it would otherwise see the uncommitted key of a host's transaction that may yet roll back.
   */
  async find({ scope, key }: ScopedKey, manager?: EntityManager): Promise<KeyedPublish | null> {
    const read = (through: EntityManager) => through.findOneBy(WebhookIdempotencyKey, { scope, key });
    const row = await (manager
      ? read(manager)
      : isMySql(this.dataSource)
        ? read(this.dataSource.manager)
        : this.dataSource.transaction(read));
    if (row === null) return null;
    return {
      scope,
      key,
      requestHash: row.requestHash,
      eventIds: JSON.parse(row.eventIds) as string[],
      queuedDeliveries: row.queuedDeliveries,
      createdAt: row.createdAt,
    };
  }

  /**
   * Inserts the keys of publishes through their transaction (`manager`), sorted, so that two transactions holding
   * some of the same keys wait for each other in one order instead of deadlocking. A key already stored makes the
   * insert fail with a unique violation (on MySQL/MariaDB after the transaction holding it ends); a key whose stored
   * row was found past the window (`replacesExpired`) replaces it if it is still older than `expiredBefore`.
   */
  async insert(manager: EntityManager, publishes: readonly KeyedPublish[], expiredBefore: number): Promise<void> {
    const sorted = [...publishes].sort((a, b) => compare(a.scope, b.scope) || compare(a.key, b.key));
    // Only then: on MySQL/MariaDB a DELETE that finds no row locks the gap, and concurrent inserts of other keys would wait on it.
    for (const { scope, key } of sorted.filter((publish) => publish.replacesExpired)) {
      await manager
        .createQueryBuilder()
        .delete()
        .from(WebhookIdempotencyKey)
        .where('scope = :scope AND idempotency_key = :key AND created_at < :expiredBefore', { scope, key, expiredBefore })
        .execute();
    }
    await manager.insert(
      WebhookIdempotencyKey,
      sorted.map((publish) => ({
        scope: publish.scope,
        key: publish.key,
        requestHash: publish.requestHash,
        eventIds: JSON.stringify(publish.eventIds),
        queuedDeliveries: publish.queuedDeliveries,
        createdAt: publish.createdAt,
      })),
    );
  }

  /** Runs `work` in a transaction of the module's DataSource: a keyed publish without the host's `manager` commits its key and events there. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** Deletes up to `limit` keys stored before `before`, in one short transaction; `matched` below `limit` means none is left. */
  purgeBefore(before: number, limit: number): Promise<{ readonly matched: number; readonly deleted: number }> {
    return shortTransaction(this.dataSource, async (manager) => {
      const rows = await manager
        .createQueryBuilder(WebhookIdempotencyKey, 'k')
        .select(['k.scope', 'k.key'])
        .where('k.createdAt < :before', { before })
        .orderBy('k.createdAt', 'ASC')
        .limit(limit)
        .getMany();
      if (rows.length === 0) return { matched: 0, deleted: 0 };
      const result = await manager
        .createQueryBuilder()
        .delete()
        .from(WebhookIdempotencyKey)
        .whereInIds(rows.map(({ scope, key }) => ({ scope, key })))
        .andWhere('created_at < :before', { before })
        .execute();
      return { matched: rows.length, deleted: result.affected ?? 0 };
    });
  }
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
