import { MAX_ATTEMPTS, RETRY_DELAYS_MS } from '../retry-policy';
import { DeliveryStatus } from '../entities/webhook-delivery.entity';
import type { AttemptResult } from '../http/attempt-result';
import { attemptRecord, refusedUnsigned } from './attempt-record';

const ok: AttemptResult = { outcome: 'success', statusCode: 204, durationMs: 12, error: null, responseExcerpt: null };
const failed: AttemptResult = {
  outcome: 'http_error',
  statusCode: 503,
  durationMs: 12,
  error: 'receiver answered 503',
  responseExcerpt: null,
};
const T = 1_800_000_000_000;

describe('attemptRecord (the next state after an attempt)', () => {
  it('is DELIVERED with nothing scheduled after a 2xx, whatever the attempt number', () => {
    for (const attempt of [1, MAX_ATTEMPTS])
      expect(attemptRecord(attempt, T, ok, T + 12)).toMatchObject({ status: DeliveryStatus.DELIVERED, nextAttemptAt: null });
  });

  it('stays PENDING after a failed attempt, due after the spec delay counted from the end of the attempt', () => {
    RETRY_DELAYS_MS.forEach((delay, index) => {
      expect(attemptRecord(index + 1, T, failed, T + 5000)).toMatchObject({
        status: DeliveryStatus.PENDING,
        nextAttemptAt: T + 5000 + delay,
      });
    });
  });

  it('is FAILED with nothing scheduled once the 6th attempt failed', () => {
    expect(attemptRecord(MAX_ATTEMPTS, T, failed, T + 1)).toMatchObject({ status: DeliveryStatus.FAILED, nextAttemptAt: null });
  });

  it('records an unsigned attempt as refused without a request, never as a success', () => {
    const refused = refusedUnsigned('no signing secret');
    expect(refused).toMatchObject({ outcome: 'blocked', statusCode: null, durationMs: 0 });
    expect(refused.error).toContain('no signing secret');
    expect(attemptRecord(1, T, refused, T)).toMatchObject({ status: DeliveryStatus.PENDING, nextAttemptAt: T + RETRY_DELAYS_MS[0] });
  });
});
