import { MAX_ATTEMPTS, nextAttemptAt } from './retry-policy';

describe('retry policy', () => {
  it.each([
    [1, 60_000],
    [2, 300_000],
    [3, 900_000],
    [4, 3_600_000],
    [5, 14_400_000],
  ])('after %i failed attempt(s) waits %i ms', (attempts, delay) => {
    expect(nextAttemptAt(attempts, 1_000)).toBe(1_000 + delay);
  });

  it('gives up after the 6th attempt', () => {
    expect(MAX_ATTEMPTS).toBe(6);
    expect(nextAttemptAt(6, 1_000)).toBeNull();
  });
});
