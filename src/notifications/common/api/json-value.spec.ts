import { MAX_JSON_DEPTH, nestsDeeperThan, verbatimJsonError } from './json-value';

const nested = (depth: number, leaf: unknown = 1): unknown => {
  let value = leaf;
  for (let level = 0; level < depth; level++) value = level % 2 ? { a: value } : [value];
  return value;
};

describe('nestsDeeperThan', () => {
  it('counts levels of objects and arrays, the value itself as level 1', () => {
    expect(nestsDeeperThan(1, 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: 2 }] }, 3)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: 2 }] }, 2)).toBe(true);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH + 1))).toBe(true);
  });

  it('stays iterative a million levels deep, and stops on a cycle', () => {
    expect(nestsDeeperThan(JSON.parse(`${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`))).toBe(true);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(nestsDeeperThan(cycle)).toBe(true);
  });
});

describe('verbatimJsonError', () => {
  it('passes any JSON value within the depth limit', () => {
    expect(
      verbatimJsonError({ valueOf: 1, toString: 'x', list: [null, true, -0.5, 'é'], deep: nested(MAX_JSON_DEPTH - 1) }, 'payload'),
    ).toBeUndefined();
  });

  it('names the field when it nests too deep, however deep', () => {
    expect(verbatimJsonError({ x: nested(MAX_JSON_DEPTH) }, 'events[3].payload')).toEqual({
      field: 'events[3].payload',
      message: `must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep`,
    });
    expect(verbatimJsonError(JSON.parse(`{"x":${'['.repeat(500_000)}${']'.repeat(500_000)}}`), 'payload')?.field).toBe('payload');
  });

  it.each([
    ['Infinity from 1e400', JSON.parse('{"amount":1e400}'), 'payload.amount', 'must be a finite number'],
    ['-Infinity deep in an array', JSON.parse('{"a":{"b":[1,-1e400]}}'), 'payload.a.b[1]', 'must be a finite number'],
    ['NaN', { n: Number.NaN }, 'payload.n', 'must be a finite number'],
    ['a bigint', { big: 10n }, 'payload.big', 'must be a JSON number, not a bigint'],
  ])('names the path of %s', (_, value, field, message) => {
    expect(verbatimJsonError(value, 'payload')).toEqual({ field, message });
  });
});
