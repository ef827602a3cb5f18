import { ValidateBy, type ValidationOptions } from 'class-validator';

/** The value, serialized as JSON, takes at most `bytes` bytes of UTF-8. */
export function MaxJsonBytes(bytes: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'maxJsonBytes',
      constraints: [bytes],
      validator: {
        validate: (value: unknown) => value === undefined || Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8') <= bytes,
        defaultMessage: () => `must be at most ${bytes} bytes as JSON`,
      },
    },
    options,
  );
}
