import type { JsonSchema } from './event-schemas';

interface Field {
  readonly type: string;
  readonly required: boolean;
}

const ANY = 'any';

function asSchema(value: unknown): JsonSchema | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonSchema) : undefined;
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * The fields a payload schema promises receivers, by path (`loan.amount`, `fills[]`, `fills[].price`), each with its
 * JSON type(s) and whether it is required: what a generated model is made of. Reached through `properties`, `items`,
 * local `$ref`s and `allOf`/`anyOf`/`oneOf`; a recursive `$ref` is followed once.
 */
export function schemaFields(root: JsonSchema): ReadonlyMap<string, Field> {
  const fields = new Map<string, Field>();
  const resolve = (ref: string): JsonSchema | undefined =>
    ref === '#' ? root : asSchema(asSchema(root.$defs)?.[ref.slice('#/$defs/'.length)]);

  const typeOf = (node: JsonSchema | undefined, refs: readonly string[]): string[] => {
    if (!node) return [ANY];
    if (typeof node.type === 'string') return [node.type];
    if (Array.isArray(node.type)) return node.type.map(String);
    if (typeof node.$ref === 'string' && !refs.includes(node.$ref)) return typeOf(resolve(node.$ref), [...refs, node.$ref]);
    if ('const' in node) return [jsonType(node.const)];
    if (Array.isArray(node.enum)) return node.enum.map(jsonType);
    const branches = [node.anyOf, node.oneOf].find(Array.isArray) as unknown[] | undefined;
    if (branches) return branches.flatMap((branch) => typeOf(asSchema(branch), refs));
    return [ANY];
  };
  const signature = (types: string[]): string => (types.includes(ANY) ? ANY : [...new Set(types)].sort().join('|'));

  const walk = (node: JsonSchema | undefined, path: string, refs: readonly string[]): void => {
    if (!node) return;
    if (typeof node.$ref === 'string') {
      if (!refs.includes(node.$ref)) walk(resolve(node.$ref), path, [...refs, node.$ref]);
    }
    const required = new Set(Array.isArray(node.required) ? node.required.map(String) : []);
    for (const [name, child] of Object.entries(asSchema(node.properties) ?? {})) {
      const at = path === '' ? name : `${path}.${name}`;
      const earlier = fields.get(at);
      const type = signature([...(earlier ? earlier.type.split('|') : []), ...typeOf(asSchema(child), refs)]);
      fields.set(at, { type, required: (earlier?.required ?? false) || required.has(name) });
      walk(asSchema(child), at, refs);
    }
    const items = asSchema(node.items);
    if (items) walk(items, `${path}[]`, refs);
    for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
      const members = node[keyword];
      if (Array.isArray(members)) for (const member of members) walk(asSchema(member), path, refs);
    }
  };
  walk(root, '', []);
  return fields;
}

/**
 * What a new schema breaks of a published one, one phrase each: a field removed, retyped (its JSON types changed) or
 * made optional. Adding fields, and changing descriptions, formats, enums, patterns or bounds, breaks nothing here.
 */
export function breakingChanges(published: JsonSchema, next: JsonSchema): string[] {
  const before = schemaFields(published);
  const after = schemaFields(next);
  return [...before].flatMap(([path, field]) => {
    const now = after.get(path);
    if (!now) return [`removes ${path}`];
    if (now.type !== field.type) return [`retypes ${path} from ${field.type} to ${now.type}`];
    if (field.required && !now.required) return [`makes ${path} optional`];
    return [];
  });
}
