export interface MemorySample {
  readonly at: number;
  readonly rss: number;
  readonly heapUsed: number;
}
