import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { IsInt, IsObject, IsOptional, IsString } from 'class-validator';
import { MAX_JSON_DEPTH } from './json-value';
import { MAX_REPORTED_ERRORS, NestedDto, rawInputErrors, VerbatimJson } from './raw-input';

class ItemDto {
  @IsInt()
  id: number;

  @IsOptional()
  @IsObject()
  @VerbatimJson()
  data?: Record<string, unknown>;
}

class ListDto {
  @IsString()
  name: string;

  @NestedDto(() => ItemDto, { each: true })
  items: ItemDto[];
}

const deep = (depth: number) => JSON.parse(`${'['.repeat(depth)}${']'.repeat(depth)}`);
const TOO_DEEP = `must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep`;

describe('rawInputErrors', () => {
  it('passes a valid input', () => {
    expect(rawInputErrors(ListDto, { name: 'n', items: [{ id: 1, data: { valueOf: 1, nested: deep(MAX_JSON_DEPTH - 1) } }] })).toEqual([]);
  });

  it('refuses every own key the DTO does not declare, built-in method names included, at any declared level', () => {
    const input = JSON.parse(
      '{"name":"n","valueOf":1,"isPrototypeOf":{},"items":[{"id":1,"toString":"x","__defineGetter__":null,"hasOwnProperty":[]}]}',
    );
    expect(rawInputErrors(ListDto, input)).toEqual([
      { field: 'valueOf', message: 'property valueOf should not exist' },
      { field: 'isPrototypeOf', message: 'property isPrototypeOf should not exist' },
      { field: 'items[0].toString', message: 'property toString should not exist' },
      { field: 'items[0].__defineGetter__', message: 'property __defineGetter__ should not exist' },
      { field: 'items[0].hasOwnProperty', message: 'property hasOwnProperty should not exist' },
    ]);
  });

  it('names each field nesting deeper than the limit, and an array body by its items', () => {
    expect(
      rawInputErrors(ListDto, {
        name: deep(MAX_JSON_DEPTH + 1),
        items: [deep(1_000), { id: deep(5_000), data: { x: deep(MAX_JSON_DEPTH) } }],
      }),
    ).toEqual([
      { field: 'name', message: TOO_DEEP },
      { field: 'items[0]', message: TOO_DEEP },
      { field: 'items[1].id', message: TOO_DEEP },
      { field: 'items[1].data', message: TOO_DEEP },
    ]);
    expect(rawInputErrors(ListDto, { name: deep(MAX_JSON_DEPTH) })).toEqual([]);
    expect(rawInputErrors(ListDto, [{}, deep(100_000)])).toEqual([{ field: '1', message: TOO_DEEP }]);
    expect(rawInputErrors(ListDto, { name: 'n', items: deep(100_000) })).toEqual([{ field: 'items[0]', message: TOO_DEEP }]);
  });

  it('names the path of a non-finite number in a verbatim field, with the path prefix given', () => {
    expect(rawInputErrors(ItemDto, JSON.parse('{"id":1,"data":{"a":[0,1e400]}}'), 'events[2]')).toEqual([
      { field: 'events[2].data.a[1]', message: 'must be a finite number' },
    ]);
  });

  it(`reports at most ${MAX_REPORTED_ERRORS} errors`, () => {
    const input = Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`k${index}`, 1]));
    expect(rawInputErrors(ListDto, input)).toHaveLength(MAX_REPORTED_ERRORS);
  });
});

describe('VerbatimJson', () => {
  it('keeps the value exactly as given, where class-transformer would drop keys named like Object.prototype members', () => {
    const data = JSON.parse('{"valueOf":1,"toString":"x","isPrototypeOf":{"a":1},"hasOwnProperty":[1],"__defineGetter__":null,"ok":2}');
    const item = plainToInstance(ItemDto, { id: 1, data });
    expect(JSON.stringify(item.data)).toBe(JSON.stringify(data));
    expect(JSON.stringify((plainToInstance(Object, { data }) as { data: unknown }).data)).toBe('{"ok":2}');
  });
});
