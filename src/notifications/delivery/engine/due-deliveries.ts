import { Brackets, type EntityManager, type SelectQueryBuilder } from 'typeorm';
import { DeliveryStatus, WebhookDelivery } from '../entities/webhook-delivery.entity';

/**
 * The PENDING deliveries due at `now` whose lease (if any) has ended, as `d`: what a claim takes (its partitions and
 * turn aside), and what the queue depth counts as due.
 */
export function dueDeliveries(manager: EntityManager, now: number): SelectQueryBuilder<WebhookDelivery> {
  return manager
    .createQueryBuilder(WebhookDelivery, 'd')
    .where('d.status = :pending', { pending: DeliveryStatus.PENDING })
    .andWhere('d.nextAttemptAt <= :now', { now })
    .andWhere(new Brackets((free) => free.where('d.lockedUntil IS NULL').orWhere('d.lockedUntil < :now', { now })));
}
