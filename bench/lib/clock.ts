import { performance } from 'node:perf_hooks';

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between processes on one machine. */
export const wallMs = (): number => performance.timeOrigin + performance.now();

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
