import { InvalidFieldsException } from '../../../common/api/api-errors';
import type { PublishEventDto } from '../dto/publish-event.dto';
import { contentHash, internalTokenScope, validIdempotencyKey } from './idempotency-key';

const event = (overrides: Partial<PublishEventDto> = {}) =>
  ({ userId: 1, type: 'LOAN_EXECUTED', severity: 'INFO', title: 't', body: 'b', ...overrides }) as PublishEventDto;

describe('validIdempotencyKey', () => {
  it.each(['a', 'order-42:retry/1', 'x'.repeat(255), '550e8400-e29b-41d4-a716-446655440000'])('takes %s', (key) => {
    expect(validIdempotencyKey(key, 'Idempotency-Key')).toBe(key);
  });

  it.each(['', 'x'.repeat(256), 'with space', 'tab\t', 'é', 'line\nbreak', 42])('refuses %j, naming the field', (key) => {
    const error = (() => {
      try {
        validIdempotencyKey(key, 'Idempotency-Key');
      } catch (thrown) {
        return thrown as InvalidFieldsException;
      }
      throw new Error('accepted');
    })();
    expect(error).toBeInstanceOf(InvalidFieldsException);
    expect(error.fieldErrors).toEqual([{ field: 'Idempotency-Key', message: expect.stringContaining('1 to 255 visible ASCII') }]);
  });
});

describe('contentHash', () => {
  it('is the same for the same events, whatever the key order of the payload and the spelling of createdAt', () => {
    const a = contentHash([event({ payload: { a: 1, b: { c: 2, d: 3 } }, createdAt: '2026-01-01T00:00:00Z' })]);
    const b = contentHash([event({ payload: { b: { d: 3, c: 2 }, a: 1 }, createdAt: '2026-01-01T01:00:00+01:00' })]);
    expect(a).toBe(b);
  });

  it('differs when anything delivered differs, or the order of the events', () => {
    const base = contentHash([event(), event({ title: 'u' })]);
    expect(contentHash([event({ title: 'u' }), event()])).not.toBe(base);
    expect(contentHash([event(), event({ title: 'v' })])).not.toBe(base);
    expect(contentHash([event(), event({ title: 'u', payload: { x: 1 } })])).not.toBe(base);
    expect(contentHash([event()])).not.toBe(base);
  });
});

describe('internalTokenScope', () => {
  it('names the token by a digest that fits the scope column, never the token', () => {
    const scope = internalTokenScope('secret-token');
    expect(scope).toMatch(/^internal:[0-9a-f]{32}$/);
    expect(scope).not.toContain('secret');
    expect(internalTokenScope('other-token')).not.toBe(scope);
  });
});
