import type { JsonSchema } from './event-schemas';
import { breakingChanges } from './schema-compatibility';

const published: JsonSchema = {
  type: 'object',
  required: ['loanId', 'amount', 'fills'],
  properties: {
    loanId: { type: 'string' },
    amount: { type: 'number' },
    note: { type: ['string', 'null'] },
    fills: { type: 'array', items: { $ref: '#/$defs/Fill' } },
    parent: { $ref: '#' },
  },
  $defs: { Fill: { type: 'object', required: ['price'], properties: { price: { type: 'number' }, side: { enum: ['BID', 'ASK'] } } } },
};

interface Editable {
  required: string[];
  properties: Record<string, Record<string, unknown>>;
  $defs: { Fill: { properties: { price: { type: unknown }; side?: { enum: string[] } } } };
}

const changed = (edit: (schema: Editable) => unknown): JsonSchema => {
  const schema = structuredClone(published) as unknown as Editable;
  edit(schema);
  return schema as unknown as JsonSchema;
};

describe('breakingChanges', () => {
  it('finds none in the same schema, nor in added fields, descriptions, enums, bounds or formats', () => {
    expect(breakingChanges(published, published)).toEqual([]);
    const added = changed((schema) => {
      schema.properties.rate = { type: 'number' };
      schema.required.push('rate');
      schema.properties.amount = { type: 'number', minimum: 0, description: 'Lent.' };
      schema.$defs.Fill.properties.side!.enum.push('MID');
      schema.properties.loanId.format = 'uuid';
    });
    expect(breakingChanges(published, added)).toEqual([]);
  });

  it.each([
    ['removes a field', (s: Editable) => delete s.properties.amount, ['removes amount', 'removes parent.amount']],
    [
      'retypes a field',
      (s: Editable) => (s.properties.amount = { type: 'string' }),
      ['retypes amount from number to string', 'retypes parent.amount from number to string'],
    ],
    [
      'retypes a nested field through $defs',
      (s: Editable) => (s.$defs.Fill.properties.price.type = 'integer'),
      ['retypes fills[].price from number to integer', 'retypes parent.fills[].price from number to integer'],
    ],
    [
      'makes a field optional',
      (s: Editable) => (s.required = ['loanId', 'fills']),
      ['makes amount optional', 'makes parent.amount optional'],
    ],
    [
      'makes a field nullable',
      (s: Editable) => (s.properties.loanId.type = ['string', 'null']),
      ['retypes loanId from string to null|string', 'retypes parent.loanId from string to null|string'],
    ],
    [
      'removes an enum field',
      (s: Editable) => delete s.$defs.Fill.properties.side,
      ['removes fills[].side', 'removes parent.fills[].side'],
    ],
  ])('%s', (_name, edit, changes) => {
    expect(breakingChanges(published, changed(edit))).toEqual(changes);
  });
});
