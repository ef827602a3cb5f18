import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { EventType } from '../catalog/event-catalog';
import { DeliveryStatus, WebhookDelivery } from './webhook-delivery.entity';
import { WebhookDeliveryAttempt } from './webhook-delivery-attempt.entity';
import { WebhookEvent } from './webhook-event.entity';

export interface DeliveryPage {
  readonly userId: number;
  readonly limit: number;
  readonly beforeId?: number;
  readonly type?: EventType;
  readonly status?: DeliveryStatus;
}

/**
 * The delivery log's read model: a user's deliveries, one delivery, its attempts, its event. Reads only: every write to
 * the delivery tables goes through the engine and its store ({@link DeliveryOutboxRepository}), which owns the lease,
 * claim and record SQL.
 */
@Injectable()
export class DeliveryLogRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The user's deliveries, newest first, after the `beforeId` cursor. */
  listForUser(page: DeliveryPage): Promise<WebhookDelivery[]> {
    const query = this.dataSource
      .getRepository(WebhookDelivery)
      .createQueryBuilder('d')
      .where('d.userId = :userId', { userId: page.userId })
      .orderBy('d.id', 'DESC')
      .limit(page.limit);
    if (page.beforeId !== undefined) query.andWhere('d.id < :beforeId', { beforeId: page.beforeId });
    if (page.type) query.andWhere('d.type = :type', { type: page.type });
    if (page.status) query.andWhere('d.status = :status', { status: page.status });
    return query.getMany();
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

  findEvent(id: string): Promise<WebhookEvent | null> {
    return this.dataSource.getRepository(WebhookEvent).findOneBy({ id });
  }
}
