import { describe, expect, it } from 'vitest';
import { disabledReasonOf } from '../src/disabled-reason';

describe('disabledReasonOf', () => {
  it('shows the text the service sends today', () => {
    expect(disabledReasonOf({ disabledReason: 'disabled after 5 consecutive failed deliveries' })).toEqual({
      code: undefined,
      text: 'disabled after 5 consecutive failed deliveries',
    });
  });

  it.each([
    [{ disabledReason: { code: 'CONSECUTIVE_FAILURES', message: 'after 5 failures' } }],
    [{ disabledReason: 'after 5 failures', disabledReasonCode: 'CONSECUTIVE_FAILURES' }],
  ])('shows a stable code when the document carries one: %j', (row) => {
    expect(disabledReasonOf(row)).toEqual({ code: 'CONSECUTIVE_FAILURES', text: 'after 5 failures' });
  });

  it('is nothing while the webhook was not turned off by the service', () => {
    expect(disabledReasonOf({ enabled: true })).toBeUndefined();
    expect(disabledReasonOf({ disabledReason: '' })).toBeUndefined();
  });
});
