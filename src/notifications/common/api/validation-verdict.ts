import { getMetadataStorage, type ValidationArguments, ValidationTypes } from 'class-validator';

type Metadata = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidationMetadatas']>[number];
type Constraint = ReturnType<ReturnType<typeof getMetadataStorage>['getTargetValidatorConstraints']>[number];

/** One property's rules, read once per class from class-validator's metadata. */
interface PropertyRules {
  readonly name: string;
  readonly conditions: readonly Metadata[];
  readonly checks: ReadonlyArray<{ readonly metadata: Metadata; readonly constraints: readonly Constraint[] }>;
  readonly nested: boolean;
}

interface ClassRules {
  readonly declared: ReadonlySet<string>;
  readonly properties: readonly PropertyRules[];
}

const storage = getMetadataStorage();
// Per class: its rules, or null when it has none (an unknown value, which forbidUnknownValues refuses).
const rulesByClass = new Map<unknown, ClassRules | null>();

/**
 * Whether `validateSync(dto, options)` with the validation pipe's options (whitelist, forbidNonWhitelisted,
 * forbidUnknownValues; no groups, no skip options) would find no error, running the same rules (class-validator's own
 * constraint classes, from its metadata) but building no error: a valid event takes a third of validateSync's time. False
 * when the DTO breaks a rule and when a rule answers a promise (not awaited here): the caller then asks class-validator,
 * which names the errors. Never true where class-validator would find one (a property test compares them).
 */
export function passesValidation(dto: object): boolean {
  const rules = rulesOf(dto.constructor);
  if (!rules) return false;
  for (const key of Object.keys(dto)) if (!rules.declared.has(key)) return false;
  const record = dto as Record<string, unknown>;
  return rules.properties.every((property) => propertyPasses(record, property));
}

function rulesOf(target: unknown): ClassRules | null {
  let rules = rulesByClass.get(target);
  if (rules === undefined) {
    rules = readRules(target as new () => object);
    rulesByClass.set(target, rules);
  }
  return rules;
}

function readRules(target: new () => object): ClassRules | null {
  const metadatas = storage.getTargetValidationMetadatas(target, '', false, false, undefined);
  if (metadatas.length === 0) return null;
  const grouped = storage.groupByPropertyName(metadatas);
  const properties: PropertyRules[] = [];
  for (const [name, all] of Object.entries(grouped)) {
    const checks = all
      .filter((m) => m.type === ValidationTypes.IS_DEFINED || m.type === ValidationTypes.CUSTOM_VALIDATION)
      .map((metadata) => ({ metadata, constraints: storage.getTargetValidatorConstraints(metadata.constraintCls) }));
    properties.push({
      name,
      conditions: all.filter((m) => m.type === ValidationTypes.CONDITIONAL_VALIDATION),
      checks,
      nested: all.some((m) => m.type === ValidationTypes.NESTED_VALIDATION),
    });
  }
  return { declared: new Set(Object.keys(grouped)), properties };
}

// As class-validator's ValidationExecutor.performValidations, with its options above.
function propertyPasses(object: Record<string, unknown>, { name, conditions, checks, nested }: PropertyRules): boolean {
  const value = object[name];
  if (!conditions.every((condition) => (condition.constraints[0] as (o: object, v: unknown) => boolean)(object, value))) return true;
  for (const { metadata, constraints } of checks) {
    if (metadata.validateIf && !metadata.validateIf(object, value)) continue;
    const args: ValidationArguments = {
      targetName: object.constructor?.name,
      property: metadata.propertyName,
      object,
      value,
      constraints: metadata.constraints,
    };
    const values = metadata.each && isCollection(value) ? [...collectionValues(value)] : [value];
    for (const constraint of constraints) {
      for (const item of values) if (!passed(constraint.instance.validate(item, args))) return false;
    }
  }
  return !nested || nestedPasses(value);
}

// A promise is not awaited here: class-validator decides.
function passed(result: unknown): boolean {
  return Boolean(result) && typeof (result as { then?: unknown }).then !== 'function';
}

// As ValidationExecutor.nestedValidations: collections item by item, objects by their own class's rules.
function nestedPasses(value: unknown): boolean {
  if (value === undefined) return true;
  if (isCollection(value)) return [...collectionValues(value)].every(nestedPasses);
  return value instanceof Object && passesValidation(value);
}

function isCollection(value: unknown): value is unknown[] | Set<unknown> | Map<unknown, unknown> {
  return Array.isArray(value) || value instanceof Set || value instanceof Map;
}

function collectionValues(value: unknown[] | Set<unknown> | Map<unknown, unknown>): Iterable<unknown> {
  return value instanceof Map ? value.values() : value;
}
