import { join } from 'node:path';
import { EventType } from '../catalog/event-catalog';
import type { EventSchemas, JsonSchema } from './event-schemas';
import { readEventSchemas } from './event-schema-files';
import { InvalidEventSchemaError, PayloadSchemas } from './payload-schemas';

const EXAMPLE_DIR = join(__dirname, '..', '..', '..', 'examples', 'event-catalog');
const example = readEventSchemas(EXAMPLE_DIR);
const schemas = PayloadSchemas.compile(example);

const loan = {
  loanId: 'L-1',
  currency: 'USD',
  amount: 1000,
  rate: 0.0002,
  periodDays: 2,
  executedAt: '2026-11-22T12:00:00Z',
};

const one = (schema: JsonSchema, version = 1): EventSchemas => ({ [EventType.LOAN_EXECUTED]: { version, schema } });
const compileError = (catalog: unknown): string => {
  try {
    PayloadSchemas.compile(catalog as EventSchemas);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidEventSchemaError);
    return (error as Error).message;
  }
  throw new Error('compiled');
};

describe('PayloadSchemas', () => {
  it('compiles the example catalog: one schema for each of the 29 event types', () => {
    expect([...schemas.types].sort()).toEqual(Object.values(EventType).sort());
    expect(schemas.schemaOf(EventType.LOAN_EXECUTED)?.version).toBe(1);
  });

  it('accepts a payload that matches, and leaves a type without a schema a free object', () => {
    expect(schemas.problem(EventType.LOAN_EXECUTED, loan, 'events[0].payload')).toBeUndefined();
    expect(PayloadSchemas.compile({}).problem(EventType.LOAN_EXECUTED, { anything: [1] }, 'events[0].payload')).toBeUndefined();
  });

  it.each([
    [{ ...loan, amount: '1000' }, 'events[3].payload.amount', 'must be number'],
    [{ ...loan, loanId: undefined }, 'events[3].payload.loanId', 'is required'],
    [{ ...loan, amout: 1 }, 'events[3].payload.amout', 'is not a field of this event type'],
    [{ ...loan, 'odd key': 1 }, 'events[3].payload["odd key"]', 'is not a field of this event type'],
    [{ ...loan, periodDays: 1.5 }, 'events[3].payload.periodDays', 'must be integer'],
  ])('names the field a payload gets wrong: %j', (payload, field, message) => {
    const clean = JSON.parse(JSON.stringify(payload)) as unknown;
    expect(schemas.problem(EventType.LOAN_EXECUTED, clean, 'events[3].payload')).toEqual({ field, message });
  });

  it('names a field inside an array through $defs', () => {
    const summary = { currency: 'USD', lentAmount: 1, interestEarned: 1, averageRate: 0.0001, utilizationPercent: 50 };
    const digest = {
      periodStart: '2026-11-21T00:00:00Z',
      periodEnd: '2026-11-22T00:00:00Z',
      totalInterestEarned: 2,
      reportingCurrency: 'USD',
      currencies: [summary, { ...summary, interestEarned: -1 }],
      loansExecuted: 3,
    };
    expect(schemas.problem(EventType.DAILY_DIGEST, digest, 'events[0].payload')).toEqual({
      field: 'events[0].payload.currencies[1].interestEarned',
      message: 'must be >= 0',
    });
  });

  describe('inputs built to break the validator', () => {
    it('checks a payload nested as deep as publishing allows against a recursive schema', () => {
      const tree = PayloadSchemas.compile(
        one({ type: 'object', properties: { child: { $ref: '#' }, leaf: { type: 'integer' } }, additionalProperties: false }),
      );
      let payload: Record<string, unknown> = { leaf: 'deepest' };
      for (let level = 1; level < 32; level++) payload = { child: payload };
      expect(tree.problem(EventType.LOAN_EXECUTED, payload, 'p')).toEqual({
        field: `p${'.child'.repeat(31)}.leaf`,
        message: 'must be integer',
      });
    });

    it('stops at the first bad item of a huge array', () => {
      const items = Array.from({ length: 100_000 }, (_, index) => (index === 70_000 ? 'x' : index));
      const list = PayloadSchemas.compile(one({ type: 'object', properties: { ids: { type: 'array', items: { type: 'integer' } } } }));
      expect(list.problem(EventType.LOAN_EXECUTED, { ids: items }, 'p')).toEqual({ field: 'p.ids[70000]', message: 'must be integer' });
    });

    it('checks strings built to make the patterns backtrack quickly (the patterns are linear)', () => {
      const heavy = PayloadSchemas.compile(
        one({
          type: 'object',
          properties: {
            host: { type: 'string', pattern: '^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+[a-z]{2,63}$' },
            code: { type: 'string', pattern: '^[A-Z][A-Z0-9_]{0,63}$' },
          },
          patternProperties: { '^x-[a-z]+(?:-[a-z]+)*$': { type: 'string' } },
          additionalProperties: false,
        }),
      );
      const started = performance.now();
      for (const payload of [
        { host: `${'a-'.repeat(8000)}!` },
        { host: `${'a.'.repeat(8000)}1` },
        { code: `A${'_'.repeat(16_000)}!` },
        { [`x-${'a-'.repeat(8000)}`]: 1 },
      ]) {
        expect(heavy.problem(EventType.LOAN_EXECUTED, payload, 'p')).toBeDefined();
      }
      expect(performance.now() - started).toBeLessThan(2000);
    });
  });

  describe('refuses a schema it cannot use, in one line naming the type', () => {
    it.each([
      [
        {
          $defs: { a: { $ref: '#/$defs/b' }, b: { allOf: [{ $ref: '#/$defs/a' }] } },
          type: 'object',
          properties: { x: { $ref: '#/$defs/a' } },
        },
        '$ref loop that reads no input: #/$defs/a -> #/$defs/b -> #/$defs/a',
      ],
      [{ type: 'object', allOf: [{ $ref: '#' }] }, '$ref loop that reads no input: # -> #'],
      [{ type: 'object', properties: { x: { $ref: 'https://example.com/money.json' } } }, '$ref "https://example.com/money.json" must be'],
      [{ type: 'object', properties: { x: { $ref: '#/properties/y' } } }, 'must be "#" or "#/$defs/<name>"'],
      [{ type: 'object', properties: { x: { $ref: '#/$defs/missing' } } }, 'names no $defs entry'],
      [{ type: 'object', properties: { x: { $id: 'https://example.com/x' } } }, '$id is not supported'],
      [{ type: 'object', propertys: {} }, 'strict mode: unknown keyword: "propertys"'],
      [{ type: 'object', properties: { x: { type: 'string', pattern: '(' } } }, 'Invalid regular expression'],
      [{ type: 'array' }, 'must have "type": "object" at its root'],
      [{ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' }, 'draft-07'],
    ])('%j', (schema, problem) => {
      const message = compileError(one(schema as JsonSchema));
      expect(message).toMatch(/^Event schema of LOAN_EXECUTED: /);
      expect(message).toContain(problem);
      expect(message).not.toContain('\n');
    });

    it.each([
      [
        { LOAN_EXECUTED: { version: 0, schema: { type: 'object' } } },
        'Event schema of LOAN_EXECUTED: version must be a whole number from 1 (got 0)',
      ],
      [
        { LOAN_EXECUTED: { version: '2', schema: { type: 'object' } } },
        'Event schema of LOAN_EXECUTED: version must be a whole number from 1 (got "2")',
      ],
      [{ LOAN_EXECUTE: { version: 1, schema: { type: 'object' } } }, 'Event schema of LOAN_EXECUTE: not an event type'],
      [{ LOAN_EXECUTED: { type: 'object' } }, 'Event schema of LOAN_EXECUTED: version must be a whole number from 1 (got undefined)'],
    ])('%j', (catalog, message) => {
      expect(compileError(catalog)).toBe(message);
    });
  });
});
