import { retentionSettings } from './retention-settings';

const DAY = 24 * 60 * 60 * 1000;
const options = (retention?: object) => ({ encryptionKeys: [], retention });

describe('retentionSettings', () => {
  it('keeps delivered and cancelled deliveries 30 days and failed ones 90 days by default, deleting 1000 rows a batch', () => {
    expect(retentionSettings(options())).toEqual({ deliveredMs: 30 * DAY, failedMs: 90 * DAY, batchSize: 1000 });
  });

  it('takes the configured ages', () => {
    expect(retentionSettings(options({ deliveredDays: 7, failedDays: 14, batchSize: 50 }))).toEqual({
      deliveredMs: 7 * DAY,
      failedMs: 14 * DAY,
      batchSize: 50,
    });
  });

  it.each([
    [{ deliveredDays: 0 }, 'retention.deliveredDays must be a whole number ≥ 1, got 0'],
    [{ failedDays: 1.5 }, 'retention.failedDays must be a whole number ≥ 1, got 1.5'],
    [{ batchSize: -1 }, 'retention.batchSize must be a whole number ≥ 1, got -1'],
  ])('refuses %o', (retention, message) => {
    expect(() => retentionSettings(options(retention))).toThrow(message);
  });
});
