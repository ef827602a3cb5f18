import type { JsonSchema } from './event-schemas';

const LOCAL_REF = /^#(\/\$defs\/[^/~]+)?$/;
const UNSUPPORTED = ['$id', '$anchor', '$dynamicRef', '$dynamicAnchor', '$recursiveRef', '$recursiveAnchor'];
// Keywords whose value is data, not a schema: a `$ref` key inside them is not a reference.
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'example']);
// Keywords that apply a schema to the same instance: a `$ref` reached through them alone consumes no input.
const IN_PLACE = ['allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else'];

/** Every subschema of a schema with its JSON pointer, the data keywords' values left out. */
export function* subschemas(schema: unknown, pointer = '#'): Generator<{ schema: JsonSchema; pointer: string }> {
  if (Array.isArray(schema)) {
    for (const [index, item] of schema.entries()) yield* subschemas(item, `${pointer}/${index}`);
    return;
  }
  if (schema === null || typeof schema !== 'object') return;
  yield { schema: schema as JsonSchema, pointer };
  for (const [key, value] of Object.entries(schema)) {
    if (!DATA_KEYWORDS.has(key)) yield* subschemas(value, `${pointer}/${key}`);
  }
}

/**
 * Why a payload schema's references cannot be used, or undefined: only `#` and `#/$defs/<name>` (the OpenAPI document
 * carries the root and each `$defs` entry as a component, and a receiver's generator resolves nothing else), and no loop
 * of references that reads no input (`a` → `b` → `a`: a validator would recurse for ever).
 */
export function schemaRefsProblem(root: JsonSchema): string | undefined {
  for (const { schema, pointer } of subschemas(root)) {
    const keyword = UNSUPPORTED.find((name) => name in schema);
    if (keyword) return `${pointer}: ${keyword} is not supported (use $defs and "$ref": "#/$defs/<name>")`;
    if ('$ref' in schema) {
      const ref = schema.$ref;
      if (typeof ref !== 'string' || !LOCAL_REF.test(ref)) {
        return `${pointer}: $ref ${JSON.stringify(ref)} must be "#" or "#/$defs/<name>"`;
      }
      if (ref !== '#' && !defs(root)[ref.slice('#/$defs/'.length)]) return `${pointer}: $ref ${ref} names no $defs entry`;
    }
  }
  return refLoop(root);
}

function defs(root: JsonSchema): Record<string, JsonSchema> {
  const value = root.$defs;
  return value !== null && typeof value === 'object' ? (value as Record<string, JsonSchema>) : {};
}

/** The references a schema follows without reading into the instance (through `$ref` and the in-place applicators). */
function inPlaceRefs(schema: unknown): string[] {
  if (schema === null || typeof schema !== 'object') return [];
  const node = schema as JsonSchema;
  const own = typeof node.$ref === 'string' ? [node.$ref] : [];
  const nested = IN_PLACE.flatMap((keyword) => {
    const value = node[keyword];
    return Array.isArray(value) ? value.flatMap(inPlaceRefs) : inPlaceRefs(value);
  });
  return [...own, ...nested];
}

function refLoop(root: JsonSchema): string | undefined {
  const target = (ref: string): unknown => (ref === '#' ? root : defs(root)[ref.slice('#/$defs/'.length)]);
  const done = new Set<string>();
  const visit = (ref: string, path: readonly string[]): string | undefined => {
    if (path.includes(ref)) return `$ref loop that reads no input: ${[...path.slice(path.indexOf(ref)), ref].join(' -> ')}`;
    if (done.has(ref)) return undefined;
    for (const next of inPlaceRefs(target(ref))) {
      const loop = visit(next, [...path, ref]);
      if (loop) return loop;
    }
    done.add(ref);
    return undefined;
  };
  return ['#', ...Object.keys(defs(root)).map((name) => `#/$defs/${name}`)].reduce<string | undefined>(
    (found, ref) => found ?? visit(ref, []),
    undefined,
  );
}
