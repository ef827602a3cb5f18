import { randomUUID } from 'node:crypto';
import type { EntityManager, EntityTarget, ObjectLiteral } from 'typeorm';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
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
            partition: partitionOf(event.userId),
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

/**
 * Writes `count` deliveries that ended FAILED (6 attempts) ten minutes ago, spread over `userIds`, for the recovery
 * scenario. Their bodies carry no `payload.t`: the receiver leaves them out of the live latency figures.
 */
export async function seedFailed(
  database: BenchDatabase,
  count: number,
  userIds: readonly number[],
  types: (userId: number) => string,
): Promise<void> {
  const { WebhookEvent, WebhookDelivery, DeliveryStatus } = library();
  const dataSource = await openDataSource(database);
  const failedAt = Date.now() - 10 * 60_000;
  try {
    for (let from = 0; from < count; from += 1000) {
      const chunk = Array.from({ length: Math.min(1000, count - from) }, (_, i) => {
        const userId = userIds[(from + i) % userIds.length];
        const type = types(userId);
        const body = JSON.stringify({
          type,
          severity: 'INFO',
          title: `Failed #${from + i}`,
          body: 'x',
          createdAt: new Date(failedAt).toISOString(),
          payload: {},
          userId,
        });
        return { id: randomUUID(), userId, type, body };
      });
      await dataSource.transaction(async (manager) => {
        await insert(
          manager,
          WebhookEvent,
          chunk.map(({ id, userId, type, body }) => ({ id, userId, type: type as never, body, createdAt: failedAt - 3_600_000 })),
        );
        await insert(
          manager,
          WebhookDelivery,
          chunk.map(({ id, userId, type }) => ({
            eventId: id,
            userId,
            partition: partitionOf(userId),
            type: type as never,
            status: DeliveryStatus.FAILED,
            attemptCount: 6,
            nextAttemptAt: null,
            lockedBy: null,
            lockedUntil: null,
            lastStatusCode: 500,
            lastError: 'HTTP 500',
            createdAt: failedAt - 3_600_000,
            updatedAt: failedAt,
          })),
        );
      });
    }
  } finally {
    await dataSource.destroy();
  }
}

// updateEntity(false): no read-back of generated columns, which on SQLite is one OR term per row (too deep for 1,000 rows).
function insert(manager: EntityManager, target: EntityTarget<ObjectLiteral>, rows: ObjectLiteral[]) {
  return manager.createQueryBuilder().insert().into(target).values(rows).updateEntity(false).execute();
}
