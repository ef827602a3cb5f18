import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { shortTransaction } from '../common/database/short-transaction';
import { DeliveryStatus, WebhookDelivery } from '../delivery/entities/webhook-delivery.entity';
import { WebhookDeliveryAttempt } from '../delivery/entities/webhook-delivery-attempt.entity';
import { WebhookEvent } from '../delivery/entities/webhook-event.entity';
import { DeliveryPurge, type PurgedBatch } from './delivery-purge';

@Injectable()
export class DeliveryPurgeRepository extends DeliveryPurge {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    super();
  }

  /**
   * Deletes up to `limit` deliveries in `status` last updated before `before` (epoch ms), their attempts, and their
   * events once no delivery refers to them (a redelivery keeps its event), in one short transaction. Finished
   * deliveries never change again, so instances purging at the same time only delete the same rows twice.
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
      // Older deliveries of these events may stay (FAILED ones are kept longer): recover must know they were delivered.
      if (status === DeliveryStatus.DELIVERED)
        await manager
          .createQueryBuilder()
          .update(WebhookEvent)
          .set({ wasDelivered: true })
          .where('id IN (:...eventIds)', { eventIds })
          .execute();
      const attempts = await manager
        .createQueryBuilder()
        .delete()
        .from(WebhookDeliveryAttempt)
        .where('delivery_id IN (:...ids)', { ids })
        .execute();
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
