import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';

/**
 * The part of JSON Schema (OpenAPI 3.1) that openapi.json uses, and no more: an unknown keyword that would change
 * what a value may be makes {@link OpenApiSchemas} throw, so the generators and the checker never silently ignore it.
 */
export interface JsonSchema {
  readonly $ref?: string;
  readonly type?: JsonType | readonly JsonType[];
  readonly enum?: readonly unknown[];
  readonly allOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: boolean | JsonSchema;
  readonly items?: JsonSchema;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly uniqueItems?: boolean;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: unknown;
  readonly nullable?: boolean;
}
type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';

export interface OpenApiParameter {
  readonly name: string;
  readonly in: 'query' | 'path' | 'header' | 'cookie';
  readonly required?: boolean;
  readonly schema: JsonSchema;
}

export interface OpenApiOperation {
  readonly operationId: string;
  readonly parameters?: readonly OpenApiParameter[];
  readonly requestBody?: { readonly required?: boolean; readonly content: Record<string, { readonly schema: JsonSchema }> };
  readonly responses: Record<string, { readonly content?: Record<string, { readonly schema: JsonSchema }> }>;
  readonly security?: ReadonlyArray<Record<string, unknown>>;
}

export interface OpenApiDocument {
  readonly paths: Record<string, Record<string, OpenApiOperation>>;
  readonly components: { readonly schemas: Record<string, JsonSchema> };
}

/** The committed openapi.json: the contract the property test drives the API from. */
export function loadOpenApiDocument(): OpenApiDocument {
  return JSON.parse(readFileSync(join(__dirname, '..', '..', 'openapi.json'), 'utf8')) as OpenApiDocument;
}

// Keywords that only describe a value; every other keyword must be handled below.
const ANNOTATIONS = new Set(['description', 'example', 'examples', 'title', 'deprecated', 'readOnly', 'writeOnly', 'default']);
const HANDLED = new Set([
  '$ref',
  'type',
  'enum',
  'allOf',
  'oneOf',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minLength',
  'maxLength',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'nullable',
]);
const FORMATS = new Set(['date-time', 'uri']);

/**
 * Values generated for a property, keyed `SchemaName.property` (e.g. `PublishEventDto.userId`), or for a whole object,
 * keyed `SchemaName`: `(fromSchema) => arbitrary`, so that a test can make success reachable (a URL its receiver
 * answers, ids that exist) while still mixing in what the schema alone allows.
 */
export type Hints = Readonly<Record<string, (fromSchema: fc.Arbitrary<unknown>) => fc.Arbitrary<unknown>>>;

/** A request body as sent: raw text (not always JSON) and its Content-Type (none when undefined). */
export interface RawBody {
  /** What kind of body this is, for failure messages and statistics: `valid`, `mutated: drop required type`… */
  readonly label: string;
  readonly raw: string;
  readonly contentType: string | undefined;
}

/** RFC 3339 date-time with an offset, as the API documents for `format: date-time` inputs. */
export const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Keys that are refused everywhere, even in an event payload (docs/api.md, "Prototype-pollution keys"). */
export const RESERVED_KEYS = ['__proto__', 'constructor', 'prototype'] as const;
/** Keys named like Object.prototype members: refused as unknown fields, delivered as-is inside a payload. */
export const BUILT_IN_NAMES = [
  'valueOf',
  'toString',
  'toLocaleString',
  'isPrototypeOf',
  'hasOwnProperty',
  'propertyIsEnumerable',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
] as const;

/** ISO-8601-ish strings that are not an RFC 3339 date-time with an offset, or not a possible instant. */
export const ODD_DATES = [
  '2026-002',
  '2026-W01-1',
  '20260101T000000Z',
  '2026-01-01T10:00:00+05',
  '2026-01-01T10:00:00+0500',
  '2026-01-01T10:00:00',
  '2026-01-01',
  '2026-02-30T00:00:00Z',
  '2025-02-29T00:00:00Z',
  '2026-13-01T00:00:00Z',
  '2026-00-10T00:00:00Z',
  '2026-01-01T24:00:00Z',
  '2026-01-01T23:60:00Z',
  '2026-12-31T23:59:60Z',
  '2026-01-01T00:00:00+24:00',
  '2026-01-01T00:00:00+05:60',
  '2026-01-01 00:00:00Z',
  '+002026-01-01T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '10000-01-01T00:00:00Z',
  '0000-01-01T00:00:00+00:01',
  '9999-12-31T23:59:59-00:01',
  '2026-01-01T00:00:00.Z',
  '2026-01-01T00:00:00,5Z',
  '2026-01-01T00:00:00ZZ',
  '2026-01-01T00:00:00Z ',
  ' 2026-01-01T00:00:00Z',
  '２０２６-01-01T00:00:00Z',
  'Thu, 01 Jan 2026 00:00:00 GMT',
  '1767225600000',
  'now',
  '',
] as const;

/** Raw JSON of arrays (or objects) nested `depth` levels deep around `leaf`. */
export function nestedJson(depth: number, kind: 'array' | 'object' = 'array', leaf = '1'): string {
  return kind === 'array' ? `${'['.repeat(depth)}${leaf}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}${leaf}${'}'.repeat(depth)}`;
}

// A value that is replaced by a raw JSON fragment after JSON.stringify (for what JSON.stringify cannot write: 1e400,
// 5,000 levels of nesting without building them as objects).
const RAW_MARK = '\u{E000}raw\u{E000}';
const rawFragment = (fragment: string) => `${RAW_MARK}${fragment}${RAW_MARK}`;
const RAW_MARK_JSON = new RegExp(`"${RAW_MARK}(.*?)${RAW_MARK}"`, 'gs');

/** JSON.stringify, then every {@link rawFragment} spliced in as raw JSON. */
export function toRawJson(value: unknown): string {
  return JSON.stringify(value).replace(RAW_MARK_JSON, (_, fragment: string) => JSON.parse(`"${fragment}"`) as string);
}

/** Sets `key` as an own enumerable property, also `__proto__` (which a plain assignment would take as the prototype). */
function defineKey(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

type Path = ReadonlyArray<string | number>;

function cloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function getAt(value: unknown, path: Path): unknown {
  return path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], value);
}

function setAt(root: unknown, path: Path, value: unknown): unknown {
  if (path.length === 0) return value;
  const copy = cloneJson(root);
  const parent = getAt(copy, path.slice(0, -1)) as Record<string | number, unknown>;
  defineKey(parent, String(path[path.length - 1]), value);
  return copy;
}

function deleteAt(root: unknown, path: Path): unknown {
  const copy = cloneJson(root);
  const parent = getAt(copy, path.slice(0, -1)) as Record<string, unknown>;
  delete parent[String(path[path.length - 1])];
  return copy;
}

const pathName = (path: Path) =>
  path.reduce<string>((name, key) => (typeof key === 'number' ? `${name}[${key}]` : name ? `${name}.${key}` : key), '') || '(body)';

/** Valid values of the document's schemas, mutations of them, and a checker, for the keywords openapi.json uses. */
export class OpenApiSchemas {
  constructor(
    readonly document: OpenApiDocument,
    private readonly hints: Hints = {},
  ) {}

  /** The schema behind `$ref`s and single-element `allOf`s (Nest's way of referencing an enum), with its own siblings. */
  resolve(schema: JsonSchema): JsonSchema {
    let current = schema;
    for (;;) {
      this.assertKnownKeywords(current);
      if (current.$ref) current = this.named(current.$ref);
      else if (current.allOf?.length === 1) {
        const { allOf, ...siblings } = current;
        current = { ...siblings, ...this.resolve(allOf[0]) };
      } else return current;
    }
  }

  /** `#/components/schemas/Name` → its schema. */
  named(ref: string): JsonSchema {
    const name = /^#\/components\/schemas\/(.+)$/.exec(ref)?.[1];
    const schema = name === undefined ? undefined : this.document.components.schemas[name];
    if (!schema) throw new Error(`openapi-arbitraries: unresolvable $ref ${ref}`);
    return schema;
  }

  private assertKnownKeywords(schema: JsonSchema): void {
    for (const keyword of Object.keys(schema)) {
      if (!HANDLED.has(keyword) && !ANNOTATIONS.has(keyword)) throw new Error(`openapi-arbitraries: keyword ${keyword} is not supported`);
    }
    if (schema.format !== undefined && !FORMATS.has(schema.format))
      throw new Error(`openapi-arbitraries: format ${schema.format} is not supported`);
    if ((schema.allOf?.length ?? 0) > 1) throw new Error('openapi-arbitraries: allOf with several schemas is not supported');
  }

  private types(schema: JsonSchema): readonly JsonType[] {
    const declared = schema.type === undefined ? [] : typeof schema.type === 'string' ? [schema.type] : schema.type;
    return schema.nullable && !declared.includes('null') ? [...declared, 'null'] : declared;
  }

  // ------------------------------------------------------------------ valid values

  /** Values valid against `schema`; `owner` is the name of the schema a property belongs to, for {@link Hints}. */
  arbitrary(schema: JsonSchema, owner?: string): fc.Arbitrary<unknown> {
    const name = schema.$ref ? /[^/]+$/.exec(schema.$ref)![0] : owner;
    const resolved = this.resolve(schema);
    if (resolved.oneOf) return fc.oneof(...resolved.oneOf.map((branch) => this.arbitrary(branch)));
    if (resolved.enum) return fc.constantFrom(...resolved.enum);
    const types = this.types(resolved);
    if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
    return fc.oneof(...types.map((type) => this.arbitraryOfType(resolved, type, name)));
  }

  private arbitraryOfType(schema: JsonSchema, type: JsonType, name: string | undefined): fc.Arbitrary<unknown> {
    switch (type) {
      case 'null':
        return fc.constant(null);
      case 'boolean':
        return fc.boolean();
      case 'integer':
      case 'number': {
        const min = schema.minimum ?? -Number.MAX_SAFE_INTEGER;
        const max = schema.maximum ?? Number.MAX_SAFE_INTEGER;
        const integers = fc.integer({
          min: Math.ceil(Math.max(min, -Number.MAX_SAFE_INTEGER)),
          max: Math.floor(Math.min(max, Number.MAX_SAFE_INTEGER)),
        });
        if (type === 'integer') return integers;
        return fc.oneof(integers, fc.double({ min, max, noNaN: true, noDefaultInfinity: true }));
      }
      case 'string': {
        if (schema.format === 'date-time') return rfc3339DateTime();
        if (schema.format === 'uri') return fc.webUrl({ withQueryParameters: true, withFragments: true });
        if (schema.pattern !== undefined) return fc.stringMatching(new RegExp(schema.pattern));
        const minLength = schema.minLength ?? 0;
        const maxLength = schema.maxLength;
        // Mostly short strings, sometimes at the limit exactly: `maxLength` counts characters (code points).
        const short = fc.string({ unit: 'grapheme-composite', minLength, maxLength: Math.min(maxLength ?? 40, 40) });
        if (maxLength === undefined) return short;
        const atLimit = fc.string({ unit: 'binary-ascii', minLength: maxLength, maxLength });
        return fc.oneof({ arbitrary: short, weight: 4 }, { arbitrary: atLimit, weight: 1 });
      }
      case 'array': {
        if (!schema.items) throw new Error('openapi-arbitraries: array without items');
        // Arrays are kept short (a run must stay fast); the limits themselves are the mutations' business.
        const minLength = schema.minItems ?? 0;
        const maxLength = Math.min(schema.maxItems ?? 3, Math.max(minLength, 3));
        if (!schema.uniqueItems) return fc.array(this.arbitrary(schema.items), { minLength, maxLength });
        return fc.uniqueArray(this.arbitrary(schema.items), { minLength, maxLength, selector: (item) => JSON.stringify(item) });
      }
      case 'object': {
        const properties = schema.properties ?? {};
        const required = new Set(schema.required ?? []);
        const record: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [key, property] of Object.entries(properties)) {
          const own = this.arbitrary(property);
          const hint = name === undefined ? undefined : this.hints[`${name}.${key}`];
          record[key] = hint ? hint(own) : own;
        }
        const declared = fc.record(record, { requiredKeys: [...required].filter((key) => key in properties) });
        if (schema.additionalProperties === true && Object.keys(properties).length === 0) return jsonObject();
        const objectHint = name === undefined ? undefined : this.hints[name];
        return objectHint ? objectHint(declared) : declared;
      }
    }
  }

  // ------------------------------------------------------------------ checking

  /**
   * What is wrong with `value` against `schema` (empty when it matches). `strict`: an object may not carry a property
   * its schema does not declare unless `additionalProperties` allows it, so a response cannot leak an undocumented field.
   */
  check(schema: JsonSchema, value: unknown, strict = true, at = '$'): string[] {
    const resolved = this.resolve(schema);
    if (resolved.oneOf) {
      const matching = resolved.oneOf.filter((branch) => this.check(branch, value, strict, at).length === 0).length;
      return matching === 1 ? [] : [`${at}: matches ${matching} of the oneOf schemas, not exactly one`];
    }
    if (resolved.enum && !resolved.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} is not one of the enum`];
    const types = this.types(resolved);
    if (types.length === 0) return [];
    const type = types.find((candidate) => isOfType(value, candidate));
    if (!type) return [`${at}: ${describeType(value)} is not ${types.join(' or ')}`];
    const problems: string[] = [];
    if (type === 'string') {
      const text = value as string;
      const length = [...text].length;
      if (resolved.maxLength !== undefined && length > resolved.maxLength) problems.push(`${at}: longer than ${resolved.maxLength}`);
      if (resolved.minLength !== undefined && length < resolved.minLength) problems.push(`${at}: shorter than ${resolved.minLength}`);
      if (resolved.pattern !== undefined && !new RegExp(resolved.pattern, 'u').test(text))
        problems.push(`${at}: does not match ${resolved.pattern}`);
      if (resolved.format === 'date-time' && !RFC3339.test(text))
        problems.push(`${at}: ${JSON.stringify(text)} is not an RFC 3339 date-time`);
      if (resolved.format === 'uri' && !URL.canParse(text)) problems.push(`${at}: ${JSON.stringify(text)} is not a URI`);
    } else if (type === 'number' || type === 'integer') {
      const number = value as number;
      if (resolved.minimum !== undefined && number < resolved.minimum) problems.push(`${at}: below ${resolved.minimum}`);
      if (resolved.maximum !== undefined && number > resolved.maximum) problems.push(`${at}: above ${resolved.maximum}`);
    } else if (type === 'array') {
      const array = value as unknown[];
      if (resolved.maxItems !== undefined && array.length > resolved.maxItems) problems.push(`${at}: more than ${resolved.maxItems} items`);
      if (resolved.minItems !== undefined && array.length < resolved.minItems)
        problems.push(`${at}: fewer than ${resolved.minItems} items`);
      if (resolved.uniqueItems && new Set(array.map((item) => JSON.stringify(item))).size !== array.length)
        problems.push(`${at}: repeated items`);
      if (resolved.items) array.forEach((item, index) => problems.push(...this.check(resolved.items!, item, strict, `${at}[${index}]`)));
    } else if (type === 'object') {
      const object = value as Record<string, unknown>;
      const properties = resolved.properties ?? {};
      for (const key of resolved.required ?? []) if (!Object.hasOwn(object, key)) problems.push(`${at}: required ${key} is missing`);
      for (const [key, item] of Object.entries(object)) {
        if (Object.hasOwn(properties, key)) problems.push(...this.check(properties[key], item, strict, `${at}.${key}`));
        else if (typeof resolved.additionalProperties === 'object')
          problems.push(...this.check(resolved.additionalProperties, item, strict, `${at}.${key}`));
        else if (resolved.additionalProperties === false || (strict && resolved.additionalProperties !== true))
          problems.push(`${at}: ${key} is not declared`);
      }
    }
    return problems;
  }

  // ------------------------------------------------------------------ mutations

  /**
   * Bodies for an operation's request schema: valid ones (JSON, `application/json`) and mutated ones, each labelled.
   * `validWeight` of every `validWeight + 1` bodies are valid.
   */
  bodies(schema: JsonSchema, validWeight = 1): fc.Arbitrary<RawBody> {
    const valid = this.arbitrary(schema);
    return fc.oneof(
      {
        arbitrary: valid.map((value) => ({ label: 'valid', raw: JSON.stringify(value), contentType: 'application/json' })),
        weight: validWeight,
      },
      { arbitrary: this.mutatedBodies(schema, valid), weight: 1 },
    );
  }

  /** Mutations of valid values of `schema`, and bodies that are not JSON or not sent as JSON. */
  mutatedBodies(schema: JsonSchema, valid: fc.Arbitrary<unknown> = this.arbitrary(schema)): fc.Arbitrary<RawBody> {
    const asJson = (label: string) => (value: unknown) => ({ label, raw: toRawJson(value), contentType: 'application/json' });
    const inValue = valid.chain((value) =>
      this.mutateValue(schema, value).map(({ label, value: mutated }) => asJson(`mutated: ${label}`)(mutated)),
    );
    return fc.oneof({ arbitrary: inValue, weight: 6 }, { arbitrary: notJsonBodies(valid), weight: 2 });
  }

  /** One mutation somewhere in `value`: picks one object the schema describes (the body, `events[i]`…) and breaks it. */
  mutateValue(schema: JsonSchema, value: unknown): fc.Arbitrary<{ label: string; value: unknown }> {
    const targets = this.objectTargets(schema, value, []);
    const whole = fc.oneof(
      fc.constantFrom(
        ...['[]', 'null', '"text"', '0', 'true', '[{}]'].map((raw) => ({ label: `body is ${raw}`, value: rawFragment(raw) })),
      ),
      fc
        .record({ depth: fc.integer({ min: 33, max: 5000 }), kind: fc.constantFrom('array' as const, 'object' as const) })
        .map(({ depth, kind }) => ({
          label: `body nested ${depth} levels (${kind}s)`,
          value: rawFragment(nestedJson(depth, kind)),
        })),
    );
    if (targets.length === 0) return whole;
    const inTarget = fc.constantFrom(...targets).chain((target) => this.mutateObject(value, target.path, target.schema));
    return fc.oneof({ arbitrary: inTarget, weight: 9 }, { arbitrary: whole, weight: 1 });
  }

  /** The objects with declared properties in `value`, with their schemas: where a field can be broken. */
  private objectTargets(schema: JsonSchema, value: unknown, path: Path): Array<{ path: Path; schema: JsonSchema }> {
    const resolved = this.resolve(schema);
    if (resolved.oneOf) {
      const branch = resolved.oneOf.find((candidate) => this.check(candidate, value, false).length === 0);
      return branch ? this.objectTargets(branch, value, path) : [];
    }
    if (Array.isArray(value) && resolved.items)
      return value.flatMap((item, index) => this.objectTargets(resolved.items!, item, [...path, index]));
    if (value === null || typeof value !== 'object' || !resolved.properties) return [];
    const own = [{ path, schema: resolved }];
    const nested = Object.entries(resolved.properties).flatMap(([key, property]) =>
      Object.hasOwn(value, key) ? this.objectTargets(property, (value as Record<string, unknown>)[key], [...path, key]) : [],
    );
    return [...own, ...nested];
  }

  private mutateObject(root: unknown, path: Path, schema: JsonSchema): fc.Arbitrary<{ label: string; value: unknown }> {
    const properties = Object.entries(schema.properties ?? {});
    const required = schema.required ?? [];
    const at = (key: string) => pathName([...path, key]);
    const mutators: Array<fc.Arbitrary<{ label: string; value: unknown }>> = [];

    if (required.length > 0) {
      mutators.push(
        fc.constantFrom(...required).map((key) => ({ label: `drop required ${at(key)}`, value: deleteAt(root, [...path, key]) })),
      );
    }

    const wrongValues: unknown[] = [0, -1, 1.5, 2 ** 53 + 2, 'text', '', ' ', true, false, null, [], {}, [1], { a: 1 }, ['RATE_SPIKE']];
    const wrongTypes = properties.flatMap(([key, property]) =>
      wrongValues.filter((candidate) => this.check(property, candidate, false).length > 0).map((candidate) => ({ key, candidate })),
    );
    if (wrongTypes.length > 0) {
      mutators.push(
        fc.constantFrom(...wrongTypes).map(({ key, candidate }) => ({
          label: `wrong value ${JSON.stringify(candidate)} for ${at(key)}`,
          value: setAt(root, [...path, key], candidate),
        })),
      );
    }

    const outOfRange = properties.flatMap(([key, property]) => this.outOfRange(property).map((candidate) => ({ key, ...candidate })));
    if (outOfRange.length > 0) {
      mutators.push(
        fc.constantFrom(...outOfRange).map(({ key, label, make }) => ({
          label: `${label} for ${at(key)}`,
          value: setAt(root, [...path, key], make(getAt(root, [...path, key]))),
        })),
      );
    }

    const unknownKeys = fc.oneof(
      fc.constantFrom(...RESERVED_KEYS, ...BUILT_IN_NAMES),
      fc.string({ minLength: 1, maxLength: 12 }).filter((key) => !Object.hasOwn(schema.properties ?? {}, key)),
    );
    mutators.push(
      fc.tuple(unknownKeys, fc.jsonValue({ maxDepth: 1 })).map(([key, extra]) => {
        const copy = cloneJson(root);
        defineKey(path.length === 0 ? (copy as object) : (getAt(copy, path) as object), key, extra);
        return { label: `unknown key ${JSON.stringify(key)} in ${pathName(path)}`, value: copy };
      }),
    );

    if (properties.length > 0) {
      const keys = properties.map(([key]) => key);
      mutators.push(
        fc
          .record({
            key: fc.constantFrom(...keys),
            depth: fc.integer({ min: 33, max: 5000 }),
            kind: fc.constantFrom('array' as const, 'object' as const),
          })
          .map(({ key, depth, kind }) => ({
            label: `${at(key)} nested ${depth} levels (${kind}s)`,
            value: setAt(root, [...path, key], rawFragment(nestedJson(depth, kind))),
          })),
        fc
          .record({
            key: fc.constantFrom(...keys),
            number: fc.constantFrom('1e400', '-1e400', '1e309', '-0', '1e-400', '123456789012345678901234567890'),
          })
          .map(({ key, number }) => ({
            label: `${at(key)} = ${number}`,
            value: setAt(root, [...path, key], rawFragment(number)),
          })),
      );
    }

    const dates = properties.filter(([, property]) => this.resolve(property).format === 'date-time').map(([key]) => key);
    if (dates.length > 0) {
      mutators.push(
        fc
          .tuple(fc.constantFrom(...dates), fc.constantFrom(...ODD_DATES))
          .map(([key, date]) => ({ label: `${at(key)} = ${JSON.stringify(date)}`, value: setAt(root, [...path, key], date) })),
      );
    }

    // Free-form objects (an event payload): what they refuse whatever the schema says.
    const freeForm = properties.filter(([, property]) => this.resolve(property).additionalProperties === true).map(([key]) => key);
    if (freeForm.length > 0) mutators.push(fc.constantFrom(...freeForm).chain((key) => freeFormMutations(root, [...path, key])));

    return fc.oneof(...mutators);
  }

  /** Values just outside a property's limits: too long, out of range, not in the enum, too many or too few items. */
  private outOfRange(schema: JsonSchema): Array<{ label: string; make: (current: unknown) => unknown }> {
    const resolved = this.resolve(schema);
    const out: Array<{ label: string; make: (current: unknown) => unknown }> = [];
    if (resolved.maxLength !== undefined) {
      const limit = resolved.maxLength;
      out.push({ label: `${limit + 1} characters`, make: () => 'x'.repeat(limit + 1) });
      out.push({ label: `${limit + 1} characters (astral)`, make: () => '\u{1F600}'.repeat(limit + 1) });
      out.push({ label: `${limit * 20} characters`, make: () => 'y'.repeat(limit * 20) });
    }
    if (resolved.minimum !== undefined) out.push({ label: `${resolved.minimum - 1} (below minimum)`, make: () => resolved.minimum! - 1 });
    if (resolved.maximum !== undefined) out.push({ label: `${resolved.maximum + 1} (above maximum)`, make: () => resolved.maximum! + 1 });
    if (resolved.enum) {
      for (const candidate of ['rate_spike', ' RATE_SPIKE', 'RATE_SPIKE\u0000', 'UNKNOWN', '']) {
        if (!resolved.enum.includes(candidate))
          out.push({ label: `${JSON.stringify(candidate)} (not in the enum)`, make: () => candidate });
      }
    }
    if (resolved.maxItems !== undefined) {
      const limit = resolved.maxItems;
      out.push({
        label: `${limit + 1} items`,
        make: (current) => Array.from({ length: limit + 1 }, () => (current as unknown[])[0] ?? null),
      });
    }
    if (resolved.minItems !== undefined && resolved.minItems > 0) out.push({ label: 'no items', make: () => [] });
    if (resolved.uniqueItems)
      out.push({ label: 'a repeated item', make: (current) => [(current as unknown[])[0] ?? null, (current as unknown[])[0] ?? null] });
    return out;
  }
}

function isOfType(value: unknown, type: JsonType): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'boolean':
      return typeof value === 'boolean';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    case 'integer':
      return Number.isInteger(value);
    case 'string':
      return typeof value === 'string';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return value !== null && typeof value === 'object' && !Array.isArray(value);
  }
}

const describeType = (value: unknown) => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** A JSON object of bounded size and depth whose keys may be named like built-ins (valid in a free-form payload). */
export function jsonObject(): fc.Arbitrary<Record<string, unknown>> {
  const key = fc.oneof(
    { arbitrary: fc.string({ maxLength: 10 }), weight: 5 },
    { arbitrary: fc.constantFrom(...BUILT_IN_NAMES), weight: 1 },
  );
  return fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5, noNullPrototype: true });
}

/** An RFC 3339 date-time with an offset, of any year 0000–9999 (its UTC instant may fall outside them at the edges). */
export function rfc3339DateTime(): fc.Arbitrary<string> {
  const two = (n: number) => String(n).padStart(2, '0');
  return fc
    .record({
      year: fc.integer({ min: 0, max: 9999 }),
      month: fc.integer({ min: 1, max: 12 }),
      day: fc.integer({ min: 1, max: 28 }),
      hour: fc.integer({ min: 0, max: 23 }),
      minute: fc.integer({ min: 0, max: 59 }),
      second: fc.integer({ min: 0, max: 59 }),
      fraction: fc.option(fc.stringMatching(/^[0-9]{1,9}$/), { nil: undefined }),
      t: fc.constantFrom('T', 't'),
      offset: fc.oneof(
        fc.constantFrom('Z', 'z', '+00:00', '-00:00'),
        fc
          .tuple(fc.constantFrom('+', '-'), fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }))
          .map(([sign, h, m]) => `${sign}${two(h)}:${two(m)}`),
      ),
    })
    .map(
      ({ year, month, day, hour, minute, second, fraction, t, offset }) =>
        `${String(year).padStart(4, '0')}-${two(month)}-${two(day)}${t}${two(hour)}:${two(minute)}:${two(second)}${fraction === undefined ? '' : `.${fraction}`}${offset}`,
    );
}

/** Mutations inside a free-form object at `path`: reserved keys at any level, non-finite numbers, nesting past 32 levels, oversize. */
function freeFormMutations(root: unknown, path: Path): fc.Arbitrary<{ label: string; value: unknown }> {
  const name = pathName(path);
  return fc.oneof(
    fc.record({ key: fc.constantFrom(...RESERVED_KEYS), depth: fc.integer({ min: 0, max: 3 }) }).map(({ key, depth }) => {
      let inner: Record<string, unknown> = {};
      defineKey(inner, key, { polluted: true });
      for (let level = 0; level < depth; level++) inner = { nested: inner };
      return { label: `${name} holds reserved key ${key} at depth ${depth + 1}`, value: setAt(root, path, inner) };
    }),
    fc
      .constantFrom('1e400', '-1e400', '1e309')
      .map((number) => ({ label: `${name}.amount = ${number}`, value: setAt(root, path, { amount: rawFragment(number) }) })),
    // The payload is level 1: {"x": 31 levels} is 32 levels (allowed), {"x": 32 levels} is 33 (refused).
    fc
      .record({ depth: fc.integer({ min: 30, max: 5000 }), kind: fc.constantFrom('array' as const, 'object' as const) })
      .map(({ depth, kind }) => ({
        label: `${name}.x nested ${depth} levels (${kind}s; payload depth ${depth + 1})`,
        value: setAt(root, path, { x: rawFragment(nestedJson(depth, kind)) }),
      })),
    fc
      .constantFrom(16_384, 17_000, 200_000)
      .map((size) => ({ label: `${name} of about ${size} bytes`, value: setAt(root, path, { text: 'z'.repeat(size) }) })),
    fc.constant({ label: `${name} is an array`, value: setAt(root, path, [1, 2]) }),
  );
}

/** Bodies that are not JSON, or JSON not sent as `application/json`, or over the 1 MB limit. */
function notJsonBodies(valid: fc.Arbitrary<unknown>): fc.Arbitrary<RawBody> {
  const json = 'application/json';
  const malformed = fc
    .constantFrom(
      '',
      ' ',
      '{',
      '}',
      '{"type":',
      '{"type":"RATE_SPIKE",}',
      "{'type':'RATE_SPIKE'}",
      '{"a":NaN}',
      '{"a":Infinity}',
      '{"a":undefined}',
      '/* c */ {}',
      '\u0000',
      'null garbage',
      '{"a":1}{"b":2}',
      '"\\ud800"',
    )
    .map((raw) => ({ label: `malformed JSON ${JSON.stringify(raw)}`, raw, contentType: json }));
  const withValid = valid.chain((value) => {
    const raw = JSON.stringify(value);
    return fc.oneof(
      fc
        .constantFrom(
          undefined,
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/jsonx',
          'application/xml',
          'json',
          '*/*',
        )
        .map((contentType) => ({ label: `valid JSON as ${contentType ?? 'no Content-Type'}`, raw, contentType })),
      fc
        .constantFrom(
          'application/json; charset=utf-8',
          'Application/JSON',
          'application/json; charset=latin1',
          'application/json;charset=UTF-16',
          'application/merge-patch+json',
        )
        .map((contentType) => ({ label: `valid JSON as ${contentType}`, raw, contentType })),
      fc.constant({ label: 'valid JSON after a byte-order mark', raw: `\uFEFF${raw}`, contentType: json }),
      fc.constant({ label: 'valid JSON cut in half', raw: raw.slice(0, Math.floor(raw.length / 2)), contentType: json }),
      fc.constant({
        label: 'valid JSON with a 1.1 MB key added',
        raw: raw.replace(/^\{/, `{"padding":"${'p'.repeat(1_100_000)}",`),
        contentType: json,
      }),
    );
  });
  return fc.oneof(malformed, withValid);
}
