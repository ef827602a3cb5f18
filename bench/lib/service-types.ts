export interface MemorySample {
  readonly at: number;
  readonly rss: number;
  readonly heapUsed: number;
}

/** What stalled the service's event loop during a measured window. */
export interface PauseReport {
  readonly loopDelayMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly gc: { readonly count: number; readonly totalMs: number; readonly maxMs: number };
}
