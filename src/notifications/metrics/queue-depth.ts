/** Deliveries due, leased (unexpired) and FAILED, each capped. */
export interface QueueDepth {
  readonly due: number;
  readonly inFlight: number;
  readonly failed: number;
}

/**
 * What the `webhook_queue_depth` gauge counts: the outbox read, never written, apart from the engine's store. An abstract
 * class so that it is a Nest DI token; the SQL store and the simulation's in-memory store implement it.
 */
export abstract class QueueDepthReader {
  /** Counts due, leased (unexpired) and FAILED deliveries, each capped at `cap`. */
  abstract queueDepth(now: number, cap: number): Promise<QueueDepth>;
}
