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
}
