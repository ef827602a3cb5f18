import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In } from 'typeorm';
import type { EventType } from '../../catalog/event-catalog';
import { DeliveryStatus, WebhookDelivery } from '../entities/webhook-delivery.entity';
import { WebhookDeliveryAttempt } from '../entities/webhook-delivery-attempt.entity';
import { WebhookEvent } from '../entities/webhook-event.entity';

/**
 * The most index entries one page of the log reads. A filter on type or on status reads its own index range and stops at
 * the page; with both, the status range is read and the type checked, at most this many entries.
 */
export const MAX_EXAMINED_PER_PAGE = 1000;

// MySQL and MariaDB pick the user's whole range (ix_webhook_deliveries_user) for its order when their statistics are thin;
// `USE INDEX` (MySQL family only; SQLite picks these itself) keeps a filtered page on its filter's range.
const BY_STATUS = 'ix_webhook_deliveries_user_status';
const BY_TYPE = 'ix_webhook_deliveries_user_type';

export interface DeliveryPage {
  readonly userId: number;
  readonly limit: number;
  readonly beforeId?: number;
  readonly type?: EventType;
  readonly status?: DeliveryStatus;
}

/** The first PENDING delivery of an ordered stream, which the ones behind it wait for. */
export interface OrderedHead {
  readonly deliveryId: number;
  readonly type: EventType;
  readonly sequence: number | null;
  readonly attemptCount: number;
  readonly nextAttemptAt: number | null;
  readonly lastError: string | null;
  /** PENDING deliveries of the stream behind it. */
  readonly waitingBehind: number;
}

/**
 * The delivery log's read model: a user's deliveries, one delivery, its attempts, its event. Reads only: every write to
 * the delivery tables goes through the engine and its store ({@link DeliveryOutboxRepository}), which owns the lease,
 * claim and record SQL.
 */
@Injectable()
export class DeliveryLogRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Up to `limit` of the user's deliveries, newest first, after the `beforeId` cursor. `examinedTo`: the oldest id read
   * when the page stopped at {@link MAX_EXAMINED_PER_PAGE} entries short of `limit` (older matches may remain), else null.
   */
  async listForUser(page: DeliveryPage): Promise<{ rows: WebhookDelivery[]; examinedTo: number | null }> {
    // One filter reads its index range (ix_webhook_deliveries_user_status or _user_type), none the user's (ix_webhook_deliveries_user).
    if (!(page.status && page.type)) {
      const query = this.userRange(page).limit(page.limit);
      if (page.status) query.andWhere('d.status = :status', { status: page.status }).useIndex(BY_STATUS);
      if (page.type) query.andWhere('d.type = :type', { type: page.type }).useIndex(BY_TYPE);
      return { rows: await query.getMany(), examinedTo: null };
    }
    // Both: the status range, its type checked, bounded, so a rare type behind many others costs a page, not the whole range.
    const examined = await this.userRange(page)
      .select('d.id', 'id')
      .addSelect('d.type', 'type')
      .andWhere('d.status = :status', { status: page.status })
      .useIndex(BY_STATUS)
      .limit(MAX_EXAMINED_PER_PAGE)
      .getRawMany<{ id: number | string; type: string }>();
    const matching = examined.filter((row) => row.type === page.type).slice(0, page.limit);
    const bounded = examined.length === MAX_EXAMINED_PER_PAGE && matching.length < page.limit;
    return {
      rows: await this.byIds(matching.map((row) => Number(row.id))),
      examinedTo: bounded ? Number(examined[examined.length - 1].id) : null,
    };
  }

  private userRange(page: DeliveryPage) {
    const query = this.dataSource
      .getRepository(WebhookDelivery)
      .createQueryBuilder('d')
      .where('d.userId = :userId', { userId: page.userId })
      .orderBy('d.id', 'DESC');
    if (page.beforeId !== undefined) query.andWhere('d.id < :beforeId', { beforeId: page.beforeId });
    return query;
  }

  private async byIds(ids: readonly number[]): Promise<WebhookDelivery[]> {
    if (ids.length === 0) return [];
    return this.dataSource.getRepository(WebhookDelivery).find({ where: { id: In([...ids]) }, order: { id: 'DESC' } });
  }

  findForUser(userId: number, id: number): Promise<WebhookDelivery | null> {
    return this.dataSource.getRepository(WebhookDelivery).findOneBy({ id, userId });
  }

  attemptsOf(deliveryId: number): Promise<WebhookDeliveryAttempt[]> {
    return this.dataSource.getRepository(WebhookDeliveryAttempt).find({ where: { deliveryId }, order: { attemptNumber: 'ASC' } });
  }

  /**
   * The user's PENDING deliveries per type, counted among at most `cap` of them (one index range scan of the user's
   * deliveries, read no further than `cap` matches): past the cap, the counts are a lower bound.
   */
  async pendingByType(userId: number, cap: number): Promise<Map<EventType, number>> {
    const [sql, params] = this.dataSource
      .getRepository(WebhookDelivery)
      .createQueryBuilder('d')
      .select('d.type', 'type')
      .where('d.userId = :userId AND d.status = :status', { userId, status: DeliveryStatus.PENDING })
      .limit(cap)
      .getQueryAndParameters();
    const rows: { type: EventType; waiting: string | number }[] = await this.dataSource.query(
      `SELECT pending.type AS type, COUNT(*) AS waiting FROM (${sql}) pending GROUP BY pending.type`,
      params,
    );
    return new Map(rows.map((row) => [row.type, Number(row.waiting)]));
  }

  /**
   * The user's ordered streams that have PENDING deliveries, by URL hash: the first one (the one the others wait for) and
   * how many wait behind it. Two index range scans per stream (`ix_webhook_deliveries_stream`).
   */
  async orderedHeads(userId: number): Promise<Map<string, OrderedHead>> {
    const heads: {
      url_hash: string;
      stream_id: number | string;
      id: number | string;
      type: EventType;
      sequence: number | string | null;
      attempt_count: number | string;
      next_attempt_at: number | string | null;
      last_error: string | null;
    }[] = await this.dataSource.query(
      'SELECT st.url_hash, st.id AS stream_id, d.id, d.type, d.sequence, d.attempt_count, d.next_attempt_at, d.last_error ' +
        'FROM webhook_streams st INNER JOIN webhook_deliveries d ON d.id = (SELECT MIN(p.id) FROM webhook_deliveries p ' +
        "WHERE p.stream_id = st.id AND p.status = 'PENDING') WHERE st.user_id = ? AND st.ordered = 1",
      [userId],
    );
    if (heads.length === 0) return new Map();
    const streamIds = heads.map((head) => Number(head.stream_id));
    const counts: { stream_id: number | string; n: number | string }[] = await this.dataSource.query(
      `SELECT stream_id, COUNT(*) AS n FROM webhook_deliveries WHERE stream_id IN (${streamIds.map(() => '?').join(', ')}) ` +
        "AND status = 'PENDING' GROUP BY stream_id",
      streamIds,
    );
    const pending = new Map(counts.map((row) => [Number(row.stream_id), Number(row.n)]));
    return new Map(
      heads.map((head) => [
        head.url_hash,
        {
          deliveryId: Number(head.id),
          type: head.type,
          sequence: head.sequence === null ? null : Number(head.sequence),
          attemptCount: Number(head.attempt_count),
          nextAttemptAt: head.next_attempt_at === null ? null : Number(head.next_attempt_at),
          lastError: head.last_error,
          waitingBehind: (pending.get(Number(head.stream_id)) ?? 1) - 1,
        },
      ]),
    );
  }

  findEvent(id: string): Promise<WebhookEvent | null> {
    return this.dataSource.getRepository(WebhookEvent).findOneBy({ id });
  }
}
