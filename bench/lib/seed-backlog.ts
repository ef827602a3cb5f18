import { randomUUID } from 'node:crypto';
import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { type BenchDatabase, openDataSource } from './databases';
import { library } from './library';
import { benchEvent } from './workload';

/**
 * Writes `count` deliveries that failed their first attempt a minute ago and are due now, through a
 * DataSource of the driver's own on the library's exported entities (so the service's heap starts clean).
 */
export async function seedDueRetries(database: BenchDatabase, count: number, users: number): Promise<void> {
  const { WebhookEvent, WebhookDelivery, DeliveryStatus } = library();
  const dataSource = await openDataSource(database);
  const now = Date.now();
  try {
    for (let from = 0; from < count; from += 1000) {
      const chunk = Array.from({ length: Math.min(1000, count - from) }, (_, i) => {
        const event = benchEvent(from + i, users);
        const body = JSON.stringify({ ...event, createdAt: new Date(now - 60_000).toISOString(), payload: { ...event.payload, t: 0 } });
        return { id: randomUUID(), event, body };
      });
      // updateEntity(false): no read-back of generated columns, which on SQLite is one OR term per row (too deep for 1,000 rows).
      const insert = (manager: EntityManager, target: EntityTarget<ObjectLiteral>, rows: ObjectLiteral[]) =>
        manager.createQueryBuilder().insert().into(target).values(rows).updateEntity(false).execute();
      await dataSource.transaction(async (manager) => {
        await insert(
          manager,
          WebhookEvent,
          chunk.map(({ id, event, body }) => ({ id, userId: event.userId, type: event.type as never, body, createdAt: now - 60_000 })),
        );
        await insert(
          manager,
          WebhookDelivery,
          chunk.map(({ id, event }) => ({
            eventId: id,
            userId: event.userId,
            type: event.type as never,
            status: DeliveryStatus.PENDING,
            attemptCount: 1,
            nextAttemptAt: now - 1000,
            lockedBy: null,
            lockedUntil: null,
            lastStatusCode: 500,
            lastError: 'HTTP 500',
            createdAt: now - 60_000,
            updatedAt: now - 60_000,
          })),
        );
      });
    }
  } finally {
    await dataSource.destroy();
  }
}
