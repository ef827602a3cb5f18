import { blockedBeforeConnect } from '../http/attempt-error';
import type { AttemptResult } from '../http/attempt-result';
import { nextAttemptAt } from '../retry-policy';
import { DeliveryStatus } from '../entities/webhook-delivery.entity';
import type { AttemptRecord } from './outbox-store';

/**
 * A delivery's next state after its attempt number `attemptNumber` ended with `result` at `endedAt` (spec 6.3):
 * DELIVERED on a 2xx; otherwise PENDING with the next retry on schedule, or FAILED once the 6th attempt failed.
 */
export function attemptRecord(attemptNumber: number, startedAt: number, result: AttemptResult, endedAt: number): AttemptRecord {
  if (result.outcome === 'success') return { startedAt, result, status: DeliveryStatus.DELIVERED, nextAttemptAt: null };
  const next = nextAttemptAt(attemptNumber, endedAt);
  return { startedAt, result, status: next === null ? DeliveryStatus.FAILED : DeliveryStatus.PENDING, nextAttemptAt: next };
}

/** An attempt that cannot be signed is never sent unsigned: it fails without a request, like a blocked address, and is retried on schedule. */
export function refusedUnsigned(reason: string): AttemptResult {
  return { ...blockedBeforeConnect(new Error(reason)), statusCode: null, durationMs: 0, responseExcerpt: null };
}

/** An attempt that came due while its endpoint's circuit was open: skipped without a request, it counts as one of the 6. */
export function skippedForOpenCircuit(host: string, until: number, reason: string): AttemptResult {
  return {
    outcome: 'circuit_open',
    statusCode: null,
    durationMs: 0,
    error: `circuit open for ${host} until ${new Date(until).toISOString()}; no request made (${reason})`,
    responseExcerpt: null,
    circuitOpenUntil: until,
  };
}
