import type { DeliveryStatus } from '../delivery/entities/webhook-delivery.entity';

/** What one purge batch deleted. */
export interface PurgedBatch {
  /** Deliveries the batch selected (fewer than the limit: nothing more to delete). */
  readonly matched: number;
  readonly deliveries: number;
  readonly attempts: number;
  readonly events: number;
}

/**
 * Retention's deletes in the outbox's tables, apart from the engine's store: finished rows never change again, so it
 * needs nothing of the engine. An abstract class so that it is a Nest DI token; the SQL store and the simulation's
 * in-memory store implement it.
 */
export abstract class DeliveryPurge {
  /**
   * Deletes up to `limit` deliveries in `status` last updated before `before`, their attempts, and their events once no
   * delivery refers to them; an event that keeps older deliveries remembers that one was DELIVERED.
   */
  abstract purgeBatch(status: DeliveryStatus, before: number, limit: number): Promise<PurgedBatch>;
}
