// What the peers scenario and a peer's process (bench/lib/peers/{pg-boss,bullmq,floor}.ts) say to each other.

/** One delivery to make: the job a peer stores, fetches, sends and marks done. */
export interface PeerJob {
  readonly eventId: string;
  readonly userId: number;
  readonly type: string;
  /** The JSON body, built at publish time as our engine stores it; signed at each attempt. */
  readonly body: string;
}

export interface PeerInput {
  /** The peer's store: a PostgreSQL, Redis or MySQL/MariaDB URL (a scratch database or a key prefix of its own). */
  readonly url: string;
  readonly bases: string[];
  readonly caPem: string;
  /** `userId/type` → signing secret, as the receiver knows them. */
  readonly secrets: [string, string][];
  readonly users: number;
  readonly events: number;
  /** Events per publish call. */
  readonly batchSize: number;
  /** Requests in flight at most. */
  readonly concurrency: number;
}

/** How a peer's jobs ended, as its store says after the run. */
export interface PeerOutcome {
  readonly done: number;
  readonly failed: number;
  /** How the peer was set up to deliver (its worker options). */
  readonly settings: Record<string, unknown>;
}
