/** Spec 6.3: at most 6 attempts; the delays between them, in order. */
export const RETRY_DELAYS_MS: readonly number[] = [60_000, 5 * 60_000, 15 * 60_000, 60 * 60_000, 4 * 60 * 60_000];
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** When the next attempt is due after `attemptsMade` failed attempts, or null when none is left. */
export function nextAttemptAt(attemptsMade: number, failedAt: number): number | null {
  const delay = RETRY_DELAYS_MS[attemptsMade - 1];
  return delay === undefined ? null : failedAt + delay;
}
