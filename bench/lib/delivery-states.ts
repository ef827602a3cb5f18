import { type BenchDatabase, openDataSource } from './databases';
import { library } from './library';

export interface DeliveryStates {
  readonly byStatus: Record<string, number>;
  /** PENDING after a failed attempt, waiting for its retry: not lost. */
  readonly rescheduled: number;
  /** Last errors of the rescheduled ones, with counts. */
  readonly lastErrors: Record<string, number>;
}

/** How the scenario's deliveries stand in the database (read through the library's exported entity). */
export async function deliveryStates(database: BenchDatabase): Promise<DeliveryStates> {
  const { WebhookDelivery } = library();
  const dataSource = await openDataSource(database);
  try {
    const rows = await dataSource
      .getRepository(WebhookDelivery)
      .createQueryBuilder('d')
      .select('d.status', 'status')
      .addSelect('d.attemptCount > 0', 'attempted')
      .addSelect('d.lastError', 'lastError')
      .addSelect('COUNT(*)', 'count')
      .groupBy('d.status')
      .addGroupBy('d.attemptCount > 0')
      .addGroupBy('d.lastError')
      .getRawMany<{ status: string; attempted: number | string; lastError: string | null; count: number | string }>();
    const byStatus: Record<string, number> = {};
    const lastErrors: Record<string, number> = {};
    let rescheduled = 0;
    for (const row of rows) {
      byStatus[row.status] = (byStatus[row.status] ?? 0) + Number(row.count);
      if (row.status === 'PENDING' && Number(row.attempted) > 0) {
        rescheduled += Number(row.count);
        const reason = (row.lastError ?? 'none').slice(0, 80);
        lastErrors[reason] = (lastErrors[reason] ?? 0) + Number(row.count);
      }
    }
    return { byStatus, rescheduled, lastErrors };
  } finally {
    await dataSource.destroy();
  }
}
