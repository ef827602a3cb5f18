import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { DataSource, SelectQueryBuilder } from 'typeorm';
import { dueDeliveries } from '../delivery/engine/due-deliveries';
import { DeliveryStatus, WebhookDelivery } from '../delivery/entities/webhook-delivery.entity';
import { type QueueDepth, QueueDepthReader } from './queue-depth';

@Injectable()
export class QueueDepthRepository extends QueueDepthReader {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {
    super();
  }

  /**
   * Counts the queue in one statement of three capped subqueries, each an index range scan: due (the claim's own
   * condition) on `(status, next_attempt_at)`, in flight on `locked_by`, failed on the `status` prefix. The caps bound
   * the work a scrape can cause however large the backlog grows.
   */
  async queueDepth(now: number, cap: number): Promise<QueueDepth> {
    const capped = (query: SelectQueryBuilder<WebhookDelivery>, alias: string) => {
      const [sql, params] = query.select('1', 'one').limit(cap).getQueryAndParameters();
      return { sql: `(SELECT COUNT(*) FROM (${sql}) ${alias})`, params };
    };
    const manager = this.dataSource.manager;
    const due = capped(dueDeliveries(manager, now), 'due_rows');
    const inFlight = capped(
      manager
        .createQueryBuilder(WebhookDelivery, 'd')
        .where('d.lockedBy IS NOT NULL AND d.lockedUntil >= :now AND d.status = :pending', { now, pending: DeliveryStatus.PENDING }),
      'leased_rows',
    );
    const failed = capped(
      manager.createQueryBuilder(WebhookDelivery, 'd').where('d.status = :failed', { failed: DeliveryStatus.FAILED }),
      'failed_rows',
    );
    const [row] = await this.dataSource.query<{ due: number | string; inFlight: number | string; failed: number | string }[]>(
      `SELECT ${due.sql} AS due, ${inFlight.sql} AS inFlight, ${failed.sql} AS failed`,
      [...due.params, ...inFlight.params, ...failed.params],
    );
    return { due: Number(row.due), inFlight: Number(row.inFlight), failed: Number(row.failed) };
  }
}
