import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { type FieldError, InvalidFieldsException } from './api-errors';

function flatten(errors: readonly ValidationError[], parent = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({ field, message: withoutFieldName(message, error.property) }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

// class-validator starts its messages with the property name; FieldError keeps them apart.
function withoutFieldName(message: string, property: string): string {
  return message.startsWith(`${property} `) ? message.slice(property.length + 1) : message;
}

/** Strict DTO validation: unknown fields are refused, and every error names its field. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new InvalidFieldsException(flatten(errors)),
  });
}
