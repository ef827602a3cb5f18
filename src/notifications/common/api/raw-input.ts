import { Transform, Type } from 'class-transformer';
import { getMetadataStorage, ValidateNested } from 'class-validator';
import type { FieldError } from './api-errors';
import { MAX_JSON_DEPTH, nestsDeeperThan, TOO_DEEP_MESSAGE, verbatimJsonError } from './json-value';

type Class = abstract new (...args: never[]) => unknown;

/** At most this many errors are reported for one input: a 1 MB body of unknown keys gets a short answer. */
export const MAX_REPORTED_ERRORS = 20;

// Per DTO prototype: its verbatim properties, and its nested DTO properties with their class.
const verbatimProperties = new WeakMap<object, Set<string>>();
const nestedProperties = new WeakMap<object, Map<string, () => Class>>();

/** A DTO's verbatim and nested properties, its ancestors' included: read once per class (every event on a publish asks). */
interface TransformRules {
  readonly verbatim: ReadonlySet<string>;
  readonly nested: ReadonlyMap<string, () => Class>;
}
const rulesCache = new WeakMap<Class, TransformRules>();

function transformRules(metatype: Class): TransformRules {
  let rules = rulesCache.get(metatype);
  if (!rules) {
    rules = { verbatim: new Set(declaredOn(verbatimProperties, metatype)), nested: new Map(declaredOn(nestedProperties, metatype)) };
    rulesCache.set(metatype, rules);
  }
  return rules;
}

/** What the class and its ancestors declared. */
function declaredOn<T>(registry: WeakMap<object, Iterable<T>>, metatype: Class): T[] {
  const found: T[] = [];
  for (let proto: object | null = metatype.prototype as object; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    found.push(...(registry.get(proto) ?? []));
  }
  return found;
}

/**
 * The property keeps the JSON value exactly as it was received (an event `payload`): class-transformer's
 * copy would drop the keys named like `Object.prototype` members (`valueOf`, `isPrototypeOf`…). Before any
 * copy, {@link rawInputErrors} refuses such a value when it nests deeper than {@link MAX_JSON_DEPTH} or holds
 * a number JSON cannot carry.
 */
export function VerbatimJson(): PropertyDecorator {
  const keepAsGiven = Transform(({ obj, key }) => (obj as Record<string, unknown>)[key], { toClassOnly: true });
  return (target, property) => {
    verbatimProperties.set(target, new Set([...(verbatimProperties.get(target) ?? []), String(property)]));
    keepAsGiven(target, property);
  };
}

/** `@ValidateNested` and `@Type` of a nested DTO (or an array of them, with `each`), which {@link rawInputErrors} checks too. */
export function NestedDto(type: () => Class, options: { each?: boolean } = {}): PropertyDecorator {
  const validate = ValidateNested({ each: options.each });
  const transform = Type(() => type() as unknown as new () => unknown);
  return (target, property) => {
    nestedProperties.set(target, new Map([...(nestedProperties.get(target) ?? []), [String(property), type]]));
    validate(target, property);
    transform(target, property);
  };
}

/**
 * What class-transformer's `plainToInstance` makes of an input, for a DTO whose only transformation rules are
 * {@link NestedDto} and {@link VerbatimJson}, without its deep copy: the DTO's instance holding the input's own values,
 * its nested DTOs (and arrays of them) made the same way, anything else as given. Only for input {@link rawInputErrors}
 * accepted: an own `__proto__` key would be copied as the prototype.
 */
export function asDto(metatype: Class, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => asDto(metatype, item));
  if (!isPlainObject(value)) return value;
  const dto = Object.assign(new (metatype as unknown as new () => Record<string, unknown>)(), value);
  for (const [key, type] of transformRules(metatype).nested) {
    if (Object.hasOwn(value, key)) dto[key] = asDto(type(), value[key]);
  }
  return dto;
}

const declaredCache = new WeakMap<Class, ReadonlySet<string>>();

/** The properties with validation rules: those class-validator's whitelist lets through. */
function declaredProperties(metatype: Class): ReadonlySet<string> {
  let declared = declaredCache.get(metatype);
  if (!declared) {
    declared = new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(metatype as unknown as new () => object, '', false, false)
        .map((m) => m.propertyName),
    );
    declaredCache.set(metatype, declared);
  }
  return declared;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function join(parent: string, property: string): string {
  return parent ? `${parent}.${property}` : property;
}

/**
 * What must be refused in a DTO's input before class-transformer sees it (400 naming each field):
 * - every own key the DTO does not declare: class-transformer would silently drop those named like
 *   `Object.prototype` members (`valueOf`, `toString`, `isPrototypeOf`…) instead of letting the
 *   whitelist refuse them;
 * - any field nesting deeper than {@link MAX_JSON_DEPTH} levels: class-transformer's recursive copy would
 *   overflow the stack;
 * - in a {@link VerbatimJson} field, a non-finite number or a bigint, named by its path.
 * Iterative over the input's own values and recursive only along the DTO's declared nesting.
 * An array where the DTO is expected is only checked for depth (its items named `0`, `1`…, as the whitelist names them).
 * At most {@link MAX_REPORTED_ERRORS} errors, in the order of the input.
 */
export function rawInputErrors(metatype: Class, value: unknown, path = ''): FieldError[] {
  return collectRawInputErrors(metatype, value, path).slice(0, MAX_REPORTED_ERRORS);
}

function collectRawInputErrors(metatype: Class, value: unknown, path: string): FieldError[] {
  if (Array.isArray(value)) {
    return value.flatMap((item, index) =>
      nestsDeeperThan(item, MAX_JSON_DEPTH) ? [{ field: path ? `${path}[${index}]` : String(index), message: TOO_DEEP_MESSAGE }] : [],
    );
  }
  if (!isPlainObject(value)) return [];
  const declared = declaredProperties(metatype);
  const { verbatim, nested } = transformRules(metatype);
  const errors: FieldError[] = [];
  for (const key of Object.keys(value)) {
    const field = join(path, key);
    const property = value[key];
    if (!declared.has(key)) {
      errors.push({ field, message: `property ${key} should not exist` });
    } else if (verbatim.has(key)) {
      const error = verbatimJsonError(property, field);
      if (error) errors.push(error);
    } else if (nested.has(key) && (isPlainObject(property) || Array.isArray(property))) {
      const type = nested.get(key)!();
      const items = Array.isArray(property)
        ? property.map((item, index) => ({ item, itemPath: `${field}[${index}]` }))
        : [{ item: property, itemPath: field }];
      for (const { item, itemPath } of items) {
        if (isPlainObject(item)) errors.push(...collectRawInputErrors(type, item, itemPath));
        else if (nestsDeeperThan(item, MAX_JSON_DEPTH)) errors.push({ field: itemPath, message: TOO_DEEP_MESSAGE });
      }
    } else if (nestsDeeperThan(property, MAX_JSON_DEPTH)) {
      errors.push({ field, message: TOO_DEEP_MESSAGE });
    }
  }
  return errors;
}
