import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import { EventType } from '../catalog/event-catalog';
import type { FieldError } from '../common/api/api-errors';
import type { EventPayloadSchema, EventSchemas, JsonSchema } from './event-schemas';
import { schemaRefsProblem } from './schema-refs';

/** A catalog that cannot be used; its message is one line naming the event type and what is wrong. */
export class InvalidEventSchemaError extends Error {
  override readonly name = 'InvalidEventSchemaError';

  constructor(
    message: string,
    /** The event type whose schema it is, when one is to blame. */
    readonly eventType?: string,
  ) {
    super(message);
  }
}

const KNOWN_TYPES = new Set<string>(Object.values(EventType));

interface Compiled {
  readonly type: EventType;
  readonly version: number;
  readonly schema: JsonSchema;
  readonly validate: ValidateFunction;
}

/**
 * The event catalog, compiled once: each registered type's payload validator. Payloads are untrusted: they reach the
 * validator only within the publish limits (16 KiB as JSON, 32 levels deep), and it stops at the first error. Schemas
 * are trusted (the host's or the operator's): a `pattern` that backtracks badly is theirs to avoid.
 */
export class PayloadSchemas {
  private readonly byType: ReadonlyMap<EventType, Compiled>;

  private constructor(compiled: readonly Compiled[]) {
    this.byType = new Map(compiled.map((entry) => [entry.type, entry]));
  }

  /** Compiles a catalog; throws {@link InvalidEventSchemaError} naming the first type that cannot be used. */
  static compile(catalog: EventSchemas | undefined): PayloadSchemas {
    // One validator instance per catalog: no schema of another catalog (another module in the process) is visible to it.
    // Its defaults never change the data (no coerceTypes, useDefaults, removeAdditional): the payload is checked, then
    // serialized as published.
    const ajv = new Ajv2020({ strict: true, strictTypes: false, strictTuples: false, validateFormats: false, logger: false });
    const entries = Object.entries(catalog ?? {}) as Array<[string, EventPayloadSchema | undefined]>;
    return new PayloadSchemas(entries.filter(([, entry]) => entry !== undefined).map(([type, entry]) => compileOne(ajv, type, entry!)));
  }

  /** The registered types, in the catalog's order. */
  get types(): readonly EventType[] {
    return [...this.byType.keys()];
  }

  /** The registered schema and version of a type, or undefined (a free object). */
  schemaOf(type: EventType): { readonly version: number; readonly schema: JsonSchema } | undefined {
    const entry = this.byType.get(type);
    return entry && { version: entry.version, schema: entry.schema };
  }

  /** The first way `payload` breaks its type's schema, named from `field` (`events[0].payload.amount`); undefined when it matches. */
  problem(type: EventType, payload: unknown, field: string): FieldError | undefined {
    const entry = this.byType.get(type);
    if (!entry || entry.validate(payload)) return undefined;
    return fieldError(entry.validate.errors?.[0], field);
  }
}

function compileOne(ajv: Ajv2020, type: string, entry: EventPayloadSchema): Compiled {
  const fail = (problem: string) => new InvalidEventSchemaError(`Event schema of ${type}: ${problem}`, type);
  if (!KNOWN_TYPES.has(type)) throw fail('not an event type');
  if (entry === null || typeof entry !== 'object') throw fail('must be { version, schema }');
  const { version, schema } = entry;
  if (!Number.isSafeInteger(version) || version < 1) throw fail(`version must be a whole number from 1 (got ${JSON.stringify(version)})`);
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) throw fail('schema must be a JSON Schema object');
  if (schema.type !== 'object') throw fail('schema must have "type": "object" at its root (a payload is an object)');
  const refs = schemaRefsProblem(schema);
  if (refs) throw fail(refs);
  try {
    return { type: type as EventType, version, schema, validate: ajv.compile(schema) };
  } catch (error) {
    throw fail(firstLine(error instanceof RangeError ? 'its references nest too deeply to compile' : (error as Error).message));
  }
}

function firstLine(message: string): string {
  return message.split('\n')[0];
}

/** One key of a path: `.amount`, `[3]`, `["odd key"]`. */
function keyPath(key: string): string {
  return /^(0|[1-9]\d*)$/.test(key) ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/** `/loan/amount` → `.loan.amount`, `/fills/3` → `.fills[3]` (JSON Pointer, RFC 6901). */
function pathOf(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .slice(1)
    .split('/')
    .map((token) => keyPath(token.replaceAll('~1', '/').replaceAll('~0', '~')))
    .join('');
}

function fieldError(error: ErrorObject | undefined, field: string): FieldError {
  if (!error) return { field, message: 'does not match its event schema' };
  const at = `${field}${pathOf(error.instancePath)}`;
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') return { field: `${at}${keyPath(String(params.missingProperty))}`, message: 'is required' };
  if (error.keyword === 'additionalProperties' || error.keyword === 'unevaluatedProperties') {
    const name = String(params.additionalProperty ?? params.unevaluatedProperty);
    return { field: `${at}${keyPath(name)}`, message: 'is not a field of this event type' };
  }
  return { field: at, message: error.message ?? 'does not match its event schema' };
}
