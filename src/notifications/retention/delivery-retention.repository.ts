import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { shortTransaction } from '../common/short-transaction';
import { type DeliveryStatus, WebhookDelivery } from '../delivery/webhook-delivery.entity';
import { WebhookDeliveryAttempt } from '../delivery/webhook-delivery-attempt.entity';
import { WebhookEvent } from '../delivery/webhook-event.entity';

/** What one purge batch deleted. */
export interface PurgedBatch {
  /** Deliveries the batch selected (fewer than the limit: nothing more to delete). */
  readonly matched: number;
  readonly deliveries: number;
  readonly attempts: number;
  readonly events: number;
}

/**
 * Deletes old finished deliveries in bounded batches: never loads more than `limit` ids, and each batch
 * is one short transaction (retried on deadlock). Finished deliveries never change again, so instances
 * purging at the same time only delete the same rows twice.
 */
@Injectable()
export class DeliveryRetentionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Deletes up to `limit` deliveries in `status` last updated before `before` (epoch ms), their attempts,
   * and their events once no delivery refers to them (a redelivery keeps its event).
   */
  purgeBatch(status: DeliveryStatus, before: number, limit: number): Promise<PurgedBatch> {
    return shortTransaction(this.dataSource, async (manager) => {
      const rows = await manager
        .createQueryBuilder(WebhookDelivery, 'd')
        .select('d.id', 'id')
        .addSelect('d.eventId', 'eventId')
        .where('d.status = :status', { status })
        .andWhere('d.updatedAt < :before', { before })
        .limit(limit)
        .getRawMany<{ id: number | string; eventId: string }>();
      if (rows.length === 0) return { matched: 0, deliveries: 0, attempts: 0, events: 0 };
      const ids = rows.map((row) => Number(row.id));
      const eventIds = [...new Set(rows.map((row) => row.eventId))];
      const attempts = await manager.createQueryBuilder().delete().from(WebhookDeliveryAttempt).where('delivery_id IN (:...ids)', { ids }).execute();
      const deliveries = await manager.createQueryBuilder().delete().from(WebhookDelivery).where('id IN (:...ids)', { ids }).execute();
      const events = await manager
        .createQueryBuilder()
        .delete()
        .from(WebhookEvent)
        .where('id IN (:...eventIds)', { eventIds })
        .andWhere('NOT EXISTS (SELECT 1 FROM webhook_deliveries remaining WHERE remaining.event_id = webhook_events.id)')
        .execute();
      return { matched: rows.length, deliveries: deliveries.affected ?? 0, attempts: attempts.affected ?? 0, events: events.affected ?? 0 };
    });
  }
}
