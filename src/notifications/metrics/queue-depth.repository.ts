import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DeliveryStatus, WebhookDelivery } from '../delivery/webhook-delivery.entity';

/** Deliveries waiting for a worker, held by one, and given up on. */
export interface QueueDepth {
  readonly due: number;
  readonly inFlight: number;
  readonly failed: number;
}

/**
 * Counts the queue in one statement of three capped subqueries, each an index range scan:
 * due on `(status, next_attempt_at)`, in flight on `locked_by`, failed on the `status` prefix.
 * The caps bound the work a scrape can cause however large the backlog grows.
 */
@Injectable()
export class QueueDepthRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async count(now: number, cap: number): Promise<QueueDepth> {
    const metadata = this.dataSource.getMetadata(WebhookDelivery);
    const table = this.dataSource.driver.escape(metadata.tablePath);
    const column = (property: keyof WebhookDelivery) => this.dataSource.driver.escape(metadata.findColumnWithPropertyName(property)!.databaseName);
    const [status, nextAttemptAt, lockedBy, lockedUntil] = [column('status'), column('nextAttemptAt'), column('lockedBy'), column('lockedUntil')];
    const capped = (where: string, alias: string) => `(SELECT COUNT(*) FROM (SELECT 1 AS one FROM ${table} WHERE ${where} LIMIT ?) ${alias})`;
    const [row] = await this.dataSource.query<{ due: number | string; inFlight: number | string; failed: number | string }[]>(
      `SELECT ${capped(`${status} = ? AND ${nextAttemptAt} <= ? AND (${lockedUntil} IS NULL OR ${lockedUntil} < ?)`, 'due_rows')} AS due,
              ${capped(`${lockedBy} IS NOT NULL AND ${lockedUntil} >= ? AND ${status} = ?`, 'leased_rows')} AS inFlight,
              ${capped(`${status} = ?`, 'failed_rows')} AS failed`,
      [DeliveryStatus.PENDING, now, now, cap, now, DeliveryStatus.PENDING, cap, DeliveryStatus.FAILED, cap],
    );
    return { due: Number(row.due), inFlight: Number(row.inFlight), failed: Number(row.failed) };
  }
}
