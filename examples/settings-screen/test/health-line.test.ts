import { describe, expect, it } from 'vitest';
import type { WebhookHealth } from '../src/api';
import { healthLine, orderedWaitLine } from '../src/health-view';
import { time } from '../src/labels';

const AT = '2026-11-26T08:00:00.000Z';
const healthy: WebhookHealth = {
  type: 'LOAN_EXECUTED',
  webhookUrl: 'https://hooks.example.com/funding',
  enabled: true,
  state: 'HEALTHY',
  failedAttemptsInRow: 0,
  failingSince: null,
  lastSuccessAt: null,
  circuitOpenUntil: null,
  waitingDeliveries: 0,
  disabledAt: null,
  orderedDelivery: false,
  waitingBehind: 0,
};

/** The one line the screen shows next to each webhook's badge, for every state the API reports. */
describe('healthLine', () => {
  it('healthy: when it last delivered, or that nothing was delivered yet, and failures since if any', () => {
    expect(healthLine(healthy)).toBe('Healthy, nothing delivered yet');
    expect(healthLine({ ...healthy, lastSuccessAt: AT })).toBe(`Healthy, last delivered ${time(AT)}`);
    expect(healthLine({ ...healthy, lastSuccessAt: AT, failedAttemptsInRow: 1 })).toBe(
      `Healthy, last delivered ${time(AT)}, 1 failed attempt since`,
    );
  });

  it('failing: since when, how many in a row, and the last status or error', () => {
    const failing = { ...healthy, state: 'FAILING' as const, failingSince: AT, failedAttemptsInRow: 4 };
    const lastAttempt = { at: AT, outcome: 'http_error' as const, statusCode: 503, error: null };
    expect(healthLine({ ...failing, lastAttempt })).toBe(`Failing since ${time(AT)}, 4 failed attempts in a row, last: HTTP 503`);
    expect(
      healthLine({ ...failing, lastAttempt: { ...lastAttempt, outcome: 'timeout', statusCode: null, error: 'no answer within 5 s' } }),
    ).toBe(`Failing since ${time(AT)}, 4 failed attempts in a row, last: no answer within 5 s`);
    expect(healthLine({ ...failing, lastAttempt: { ...lastAttempt, outcome: 'connect_error', statusCode: null } })).toMatch(
      /last: connect error$/,
    );
  });

  it('circuit open: until when, and how many deliveries wait', () => {
    const open = { ...healthy, state: 'CIRCUIT_OPEN' as const, circuitOpenUntil: AT, waitingDeliveries: 12_000 };
    expect(healthLine(open)).toBe(`Circuit open until ${time(AT)}, 12,000 deliveries waiting`);
    expect(healthLine({ ...open, waitingDeliveries: 1 })).toBe(`Circuit open until ${time(AT)}, 1 delivery waiting`);
  });

  it('disabled by the service: why; turned off by the user: that nothing is sent', () => {
    const disabled = { ...healthy, state: 'DISABLED' as const, enabled: false, disabledAt: AT };
    expect(healthLine({ ...disabled, disabledReason: 'disabled after 5 consecutive failed deliveries' })).toBe(
      'Disabled by the service: disabled after 5 consecutive failed deliveries',
    );
    expect(healthLine({ ...healthy, state: 'OFF', enabled: false })).toBe('Turned off: nothing is sent to it');
  });
});

/** The line under the badge while ordered delivery holds deliveries behind the one being retried. */
describe('orderedWaitLine', () => {
  const head = {
    deliveryId: 41,
    type: 'RATE_SPIKE' as const,
    sequence: 7,
    attemptCount: 3,
    nextAttemptAt: AT,
    lastError: 'receiver answered 503',
  };
  const waiting: WebhookHealth = { ...healthy, state: 'FAILING', orderedDelivery: true, orderedHead: head, waitingBehind: 2 };

  it('says how many wait, behind which delivery (its number in the log and its sequence), its attempts and next try', () => {
    expect(orderedWaitLine(waiting)).toBe(
      `Ordered delivery: 2 deliveries waiting behind delivery #41 (Rate spike, sequence 7; 3 attempts so far; last: receiver answered 503; next try ${time(AT)})`,
    );
    expect(
      orderedWaitLine({ ...waiting, waitingBehind: 1, orderedHead: { ...head, sequence: null, attemptCount: 0, lastError: null } }),
    ).toBe(`Ordered delivery: 1 delivery waiting behind delivery #41 (Rate spike; 0 attempts so far; next try ${time(AT)})`);
  });

  it('says nothing when nothing waits, or when ordered delivery is off', () => {
    expect(orderedWaitLine({ ...waiting, waitingBehind: 0 })).toBeUndefined();
    expect(orderedWaitLine({ ...waiting, orderedHead: undefined })).toBeUndefined();
    expect(orderedWaitLine({ ...waiting, orderedDelivery: false })).toBeUndefined();
    expect(orderedWaitLine(healthy)).toBeUndefined();
  });
});
