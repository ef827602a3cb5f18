import { validateSync } from 'class-validator';
import { IsRfc3339DateTime, rfc3339Instant } from './rfc3339';

describe('rfc3339Instant', () => {
  it.each([
    ['2026-11-22T12:00:00Z', '2026-11-22T12:00:00.000Z'],
    ['2026-11-22T12:00:00.123Z', '2026-11-22T12:00:00.123Z'],
    ['2026-11-22T12:00:00.5Z', '2026-11-22T12:00:00.500Z'],
    ['2026-11-22T12:00:00.123999999Z', '2026-11-22T12:00:00.123Z'],
    ['2026-01-01T10:00:00+05:00', '2026-01-01T05:00:00.000Z'],
    ['2026-01-01T01:30:00+05:30', '2025-12-31T20:00:00.000Z'],
    ['2026-12-31T20:00:00-04:00', '2027-01-01T00:00:00.000Z'],
    ['2026-01-01T00:00:00-00:00', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01t00:00:00z', '2026-01-01T00:00:00.000Z'],
    ['2028-02-29T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['2000-02-29T00:00:00Z', '2000-02-29T00:00:00.000Z'],
    ['0050-06-01T00:00:00Z', '0050-06-01T00:00:00.000Z'],
    ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
  ])('reads %s as the instant %s', (value, instant) => {
    expect(rfc3339Instant(value)).toBe(instant);
  });

  it.each([
    ['an ordinal date', '2026-002'],
    ['a week date', '2026-W01-1'],
    ['the basic format', '20260101T000000Z'],
    ['an offset without minutes', '2026-01-01T10:00:00+05'],
    ['an offset without a colon', '2026-01-01T10:00:00+0500'],
    ['no offset (local time)', '2026-01-01T10:00:00'],
    ['a date only', '2026-01-01'],
    ['a space for T', '2026-01-01 10:00:00Z'],
    ['no seconds', '2026-01-01T10:00Z'],
    ['30 February', '2026-02-30T00:00:00Z'],
    ['29 February of a common year', '2026-02-29T00:00:00Z'],
    ['29 February 1900', '1900-02-29T00:00:00Z'],
    ['31 April', '2026-04-31T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['day 0', '2026-01-00T00:00:00Z'],
    ['hour 24', '2026-01-01T24:00:00Z'],
    ['minute 60', '2026-01-01T10:60:00Z'],
    ['a leap second', '2026-12-31T23:59:60Z'],
    ['offset hour 24', '2026-01-01T10:00:00+24:00'],
    ['offset minute 60', '2026-01-01T10:00:00+01:60'],
    ['an empty fraction', '2026-01-01T10:00:00.Z'],
    ['a year beyond 9999 in UTC', '9999-12-31T23:00:00-02:00'],
    ['a year before 0000 in UTC', '0000-01-01T00:00:00+01:00'],
    ['an expanded year', '+002026-01-01T00:00:00Z'],
    ['trailing text', '2026-01-01T00:00:00Z\n'],
    ['non-ASCII digits', '２０２６-01-01T00:00:00Z'],
    ['an empty string', ''],
  ])('refuses %s (%s)', (_, value) => {
    expect(rfc3339Instant(value)).toBeUndefined();
  });
});

describe('IsRfc3339DateTime', () => {
  class Dto {
    @IsRfc3339DateTime()
    at: unknown;
  }
  const errorsFor = (at: unknown) => validateSync(Object.assign(new Dto(), { at })).map((error) => error.constraints);

  it('accepts an RFC 3339 date-time and refuses anything else, strings or not', () => {
    expect(errorsFor('2026-11-22T12:00:00Z')).toEqual([]);
    for (const at of ['2026-002', 42, null, new Date()]) {
      expect(errorsFor(at)).toEqual([{ isRfc3339DateTime: expect.stringMatching(/^must be an ISO-8601 instant in RFC 3339 form/) }]);
    }
  });
});
