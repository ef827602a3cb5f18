/** Share of requests answered each way; the rest get 200. */
export interface FaultRates {
  readonly error500: number;
  readonly hang: number;
  readonly reset: number;
  readonly redirect302: number;
}

export interface ReceiverStart {
  /** One https://127.0.0.N:port base per origin. */
  readonly bases: string[];
  readonly caPem: string;
}

export interface ReceivedAttempt {
  readonly attempt: number;
  readonly at: number;
  readonly behaviour: 'ok' | 'error500' | 'hang' | 'reset' | 'redirect302';
  readonly seq: number | null;
  readonly validSignature: boolean;
}

export interface ReceiverStats {
  readonly requests: number;
  readonly ok: number;
  readonly uniqueEvents: number;
  /** Requests beyond the first for the same event id. */
  readonly duplicates: number;
  readonly badSignatures: number;
  readonly badSignatureSamples: string[];
  readonly firstAt: number;
  readonly lastOkAt: number;
  readonly answered: Record<ReceivedAttempt['behaviour'], number>;
  readonly connections?: number;
  readonly tlsHandshakes?: number;
  readonly tlsResumed?: number;
}

/** How a neighbour's endpoint (one user's `/hook/<userId>/…` paths) answers: never, or 200 after `delayMs`. */
export interface NeighbourBehaviour {
  readonly behaviour: 'hang' | 'slow';
  /** For `slow`: the delay before the 200. */
  readonly delayMs?: number;
}

/** Requests to the neighbours' endpoints, kept apart from every other count of the receiver. */
export interface NeighbourStats {
  readonly requests: number;
  readonly uniqueEvents: number;
  /** Answered 200 (slow neighbour only). */
  readonly answeredOk: number;
  /** Requests the receiver holds open right now (a hanging endpoint never answers; the client gives up). */
  readonly open: number;
  /** Requests that the client closed before any answer. */
  readonly abandonedByClient: number;
  readonly badSignatures: number;
  /** Requests by the `X-Service-Attempt` number they carried. */
  readonly byAttemptNumber: Record<number, number>;
}

/**
 * One watched endpoint (a user's `/hook/<userId>/…` paths), whatever answers it: each request is in flight from its
 * arrival (headers received) until its response is ended (`res.end()`, 'prefinish'), or closed unanswered ('close':
 * the client gave up, or the socket died).
 */
export interface EndpointStats {
  readonly requests: number;
  readonly uniqueEvents: number;
  readonly inFlight: number;
  /** The most requests in flight at once, and when (wall time, epoch ms) it was first reached. */
  readonly peakInFlight: number;
  readonly peakAt: number;
  /** Responses ended in full ('prefinish'). */
  readonly answered: number;
  /** Requests closed without a full response (the client's deadline, or a dropped socket). */
  readonly closedUnanswered: number;
  /** Sum over the ended requests of their time in flight, ms: divided by a duration, the mean number in flight. */
  readonly busyMs: number;
  /** Wall time (epoch ms) of each request's arrival, in order. */
  readonly arrivals: number[];
  /** Wall time of the last response ended in full, or 0. */
  readonly lastAnsweredAt: number;
}

/** The first arrival of one event (any attempt number) that carried `payload.t`: [publish-to-arrival ms, userId, arrival wall time, seq]. */
export type Arrival = [latencyMs: number, userId: number, at: number, seq: number];
