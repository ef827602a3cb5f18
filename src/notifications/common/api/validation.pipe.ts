import { type ArgumentMetadata, BadRequestException, ValidationPipe, type ValidationError } from '@nestjs/common';
import { validateSync, type ValidatorOptions } from 'class-validator';
import { type FieldError, InvalidFieldsException } from './api-errors';
import { asDto, isPlainObject, rawInputErrors } from './raw-input';
import { passesValidation } from './validation-verdict';

// Unknown fields are refused (whatever their name); errors carry neither the input nor its values.
export const VALIDATOR_OPTIONS: ValidatorOptions = {
  whitelist: true,
  forbidNonWhitelisted: true,
  forbidUnknownValues: true,
  validationError: { target: false, value: false },
};

/** One FieldError per failed constraint, with dotted paths (`events[2].type` style for arrays). */
export function flattenValidationErrors(errors: readonly ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = !parent ? error.property : /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message: withoutFieldName(message, error.property) }));
    return [...own, ...flattenValidationErrors(error.children ?? [], field)];
  });
}

// class-validator starts its messages with the property name; FieldError keeps them apart.
function withoutFieldName(message: string, property: string): string {
  return message.startsWith(`${property} `) ? message.slice(property.length + 1) : message;
}

class StrictValidationPipe extends ValidationPipe {
  // Bodies and queries are checked as received first (unknown own keys, nesting depth, payload numbers):
  // class-transformer would drop keys named like Object.prototype members and overflow the stack on deep input.
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if ((metadata.type === 'body' || metadata.type === 'query') && metadata.metatype && this.toValidate(metadata)) {
      const errors = rawInputErrors(metadata.metatype, value);
      if (errors.length > 0) throw new InvalidFieldsException(errors);
    }
    return super.transform(value, metadata);
  }

  // Path parameters stay strings for their own pipe (PositiveIntPipe): Number('1e3') or Number(' 7') must not pass as ids.
  protected override transformPrimitive(value: unknown, metadata: ArgumentMetadata): unknown {
    return metadata.type === 'param' ? value : super.transformPrimitive(value, metadata);
  }
}

/**
 * Strict DTO validation: unknown fields are refused (whatever their name), no field nests deeper than
 * MAX_JSON_DEPTH, and every error names its field.
 */
export function createValidationPipe(): ValidationPipe {
  return new StrictValidationPipe({
    ...VALIDATOR_OPTIONS,
    transform: true,
    exceptionFactory: (errors) => new InvalidFieldsException(flattenValidationErrors(errors)),
  });
}

/**
 * The pipe's check of one JSON object, synchronous and without class-transformer's deep copy (see {@link asDto}): for
 * DTOs whose only transformation rules are `NestedDto` and `VerbatimJson`, on a hot path (events to publish). The same
 * errors as the pipe's, each field named from `path` (`events[2].type` for `events[2]`; a request body without one).
 */
export function validatedDto<T extends object>(metatype: new () => T, input: unknown, path = ''): T {
  if (!isPlainObject(input)) {
    throw path ? InvalidFieldsException.of(path, 'must be a JSON object') : new BadRequestException('The body must be a JSON object');
  }
  const rawErrors = rawInputErrors(metatype, input, path);
  if (rawErrors.length > 0) throw new InvalidFieldsException(rawErrors);
  const dto = asDto(metatype, input) as T;
  if (passesValidation(dto)) return dto;
  const errors = validateSync(dto, VALIDATOR_OPTIONS);
  if (errors.length > 0) throw new InvalidFieldsException(flattenValidationErrors(errors, path));
  return dto;
}
