import { ValidateBy, type ValidationOptions } from 'class-validator';

// RFC 3339 section 5.6 `date-time`: full-date "T" full-time, the offset required. T and Z may be lowercase (5.6, NOTE).
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1];
}

/**
 * The instant of an RFC 3339 date-time with an offset (`2026-11-22T12:00:00Z`, `2026-11-22T13:00:00.5+01:00`),
 * as the UTC string `toISOString()` writes (`2026-11-22T12:00:00.000Z`, to the millisecond: further digits are
 * cut). Undefined for anything else: other ISO-8601 forms (`2026-002`, `2026-W01-1`, `20260101T000000Z`,
 * `2026-01-01T10:00:00+05`), no offset (local time would depend on the server), impossible dates or times
 * (`2026-02-30`, `24:00:00`, a leap second `:60`), or an instant outside the years 0000–9999 in UTC.
 */
export function rfc3339Instant(value: string): string | undefined {
  const match = DATE_TIME.exec(value);
  if (!match) return undefined;
  const [, year, month, day, hour, minute, second, fraction = '', zulu, sign, offsetHour, offsetMinute] = match;
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number);
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return undefined;
  let offsetMinutes = 0;
  if (!zulu) {
    const [oh, om] = [Number(offsetHour), Number(offsetMinute)];
    if (oh > 23 || om > 59) return undefined;
    offsetMinutes = (sign === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const instant = new Date(0);
  instant.setUTCFullYear(y, mo - 1, d); // not Date.UTC, which reads the years 0–99 as 1900–1999
  instant.setUTCHours(h, mi - offsetMinutes, s, Number(fraction.slice(0, 3).padEnd(3, '0')));
  const iso = instant.toISOString();
  return /^\d{4}-/.test(iso) ? iso : undefined;
}

export const RFC3339_MESSAGE =
  'must be an ISO-8601 instant in RFC 3339 form, with date, time and offset: 2026-11-22T12:00:00Z or 2026-11-22T13:00:00+01:00';

/** A string that {@link rfc3339Instant} reads as an instant. */
export function IsRfc3339DateTime(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRfc3339DateTime',
      validator: {
        validate: (value: unknown) => typeof value === 'string' && rfc3339Instant(value) !== undefined,
        defaultMessage: () => RFC3339_MESSAGE,
      },
    },
    options,
  );
}
