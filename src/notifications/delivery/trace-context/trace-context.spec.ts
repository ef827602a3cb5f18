import {
  formatTraceparent,
  MAX_TRACESTATE_LENGTH,
  parseTraceparent,
  parseTracestate,
  randomSpanId,
  receivedTraceContext,
  traceHeaders,
} from './trace-context';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

describe('parseTraceparent', () => {
  it.each([
    ['sampled', `00-${TRACE_ID}-${PARENT_ID}-01`, true],
    ['not sampled', `00-${TRACE_ID}-${PARENT_ID}-00`, false],
    ['with flags level 1 does not define (dropped)', `00-${TRACE_ID}-${PARENT_ID}-ff`, true],
    ['without the sampled flag among others', `00-${TRACE_ID}-${PARENT_ID}-fe`, false],
    ['of a later version, by its version 00 fields', `01-${TRACE_ID}-${PARENT_ID}-01`, true],
    ['of a later version with more fields after a dash', `cc-${TRACE_ID}-${PARENT_ID}-01-what-the-future-adds`, true],
  ])('accepts one %s', (_, value, sampled) => {
    expect(parseTraceparent(value)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, sampled });
  });

  it.each([
    ['empty', ''],
    ['version ff', `ff-${TRACE_ID}-${PARENT_ID}-01`],
    ['version 00 with more after it', `00-${TRACE_ID}-${PARENT_ID}-01-00`],
    ['version 00 with a trailing space', `00-${TRACE_ID}-${PARENT_ID}-01 `],
    ['a later version with more fields without a dash', `01-${TRACE_ID}-${PARENT_ID}-01x`],
    ['upper-case hex', `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`],
    ['an upper-case version', `0A-${TRACE_ID}-${PARENT_ID}-01`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT_ID}-01`],
    ['an all-zero parent id', `00-${TRACE_ID}-${'0'.repeat(16)}-01`],
    ['a short trace id', `00-${TRACE_ID.slice(1)}-${PARENT_ID}-01`],
    ['a long parent id', `00-${TRACE_ID}-${PARENT_ID}0-01`],
    ['one flag digit', `00-${TRACE_ID}-${PARENT_ID}-1`],
    ['a non-hex digit', `00-${TRACE_ID.slice(0, -1)}g-${PARENT_ID}-01`],
    ['other separators', `00_${TRACE_ID}_${PARENT_ID}_01`],
    ['two headers joined by a comma', `00-${TRACE_ID}-${PARENT_ID}-01, 00-${TRACE_ID}-${PARENT_ID}-01`],
  ])('refuses %s', (_, value) => {
    expect(parseTraceparent(value)).toBeNull();
  });
});

describe('parseTracestate', () => {
  it('keeps valid members in order, joined by commas, without optional whitespace or empty members', () => {
    expect(parseTracestate('rojo=00f067aa0ba902b7, congo=t61rcWkgMzE,\t,tenant@vendor=x y')).toBe(
      'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE,tenant@vendor=x y',
    );
  });

  it.each([
    ['empty', ''],
    ['a member without =', 'rojo'],
    ['an upper-case key', 'Rojo=1'],
    ['a key starting with a digit (single-tenant)', '1rojo=1'],
    ['a value with =', 'rojo=a=b'],
    ['a value with a control character', 'rojo=a\u0001b'],
    ['an empty value', 'rojo='],
    ['a duplicate key', 'rojo=1,rojo=2'],
    ['33 members', Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(',')],
  ])('refuses %s', (_, value) => {
    expect(parseTracestate(value)).toBeNull();
  });

  it(`cuts a value longer than ${MAX_TRACESTATE_LENGTH} characters: long members first, then from the end`, () => {
    const long = `long=${'x'.repeat(200)}`;
    const members = Array.from({ length: 20 }, (_, i) => `k${String(i).padStart(2, '0')}=${'v'.repeat(25)}`); // 29 characters each
    const cut = parseTracestate([members[0], long, ...members.slice(1)].join(','))!;
    expect(cut.length).toBeLessThanOrEqual(MAX_TRACESTATE_LENGTH);
    expect(cut).not.toContain('long=');
    expect(cut).toBe(members.slice(0, 17).join(','));
  });
});

describe('receivedTraceContext', () => {
  const traceparent = `00-${TRACE_ID}-${PARENT_ID}-01`;

  it('takes a valid traceparent with its tracestate', () => {
    expect(receivedTraceContext(traceparent, 'rojo=1')).toEqual({
      traceId: TRACE_ID,
      parentId: PARENT_ID,
      sampled: true,
      traceState: 'rojo=1',
    });
  });

  it('ignores an invalid traceparent, and its tracestate with it', () => {
    expect(receivedTraceContext(traceparent.toUpperCase(), 'rojo=1')).toBeNull();
    expect(receivedTraceContext(undefined, 'rojo=1')).toBeNull();
  });

  it('keeps a valid traceparent when only its tracestate is invalid', () => {
    expect(receivedTraceContext(traceparent, 'Rojo=1')).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, sampled: true });
  });
});

describe('traceparent of a child span', () => {
  it('keeps the trace id and the sampled flag, with the new span id', () => {
    const trace = { traceId: TRACE_ID, parentId: PARENT_ID, sampled: false, traceState: 'rojo=1' };
    expect(traceHeaders(trace, 'b7ad6b7169203331')).toEqual({ traceparent: `00-${TRACE_ID}-b7ad6b7169203331-00`, tracestate: 'rojo=1' });
    expect(formatTraceparent({ traceId: TRACE_ID, sampled: true }, PARENT_ID)).toBe(`00-${TRACE_ID}-${PARENT_ID}-01`);
  });

  it('makes random span ids of 16 lowercase hex digits', () => {
    const ids = new Set(Array.from({ length: 100 }, () => randomSpanId()));
    expect(ids.size).toBe(100);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{16}$/);
  });
});
