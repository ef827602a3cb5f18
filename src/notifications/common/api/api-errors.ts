import { BadRequestException } from '@nestjs/common';

/** One invalid input field: the UI shows `message` next to `field`. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/** 400 for input that is well-formed but not acceptable; message and errors both name the field. */
export class InvalidFieldsException extends BadRequestException {
  constructor(readonly fieldErrors: readonly FieldError[]) {
    super({ message: fieldErrors.map((e) => `${e.field} ${e.message}`).join('; '), errors: fieldErrors });
  }

  static of(field: string, message: string): InvalidFieldsException {
    return new InvalidFieldsException([{ field, message }]);
  }
}
