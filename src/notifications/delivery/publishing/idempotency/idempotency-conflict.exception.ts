import { ConflictException } from '@nestjs/common';

/** 409: the key was used within the window for other events; a retry must send exactly the same ones. */
export class IdempotencyKeyReusedException extends ConflictException {
  constructor(field: string, usedAt: number) {
    super(
      `${field} was already used at ${new Date(usedAt).toISOString()} for different events: a retry must send exactly the same ` +
        'events with the same key, and new events need a new key',
    );
  }
}

/**
 * 409: another publish with the same key is committing at this moment, and its outcome cannot be read from inside
 * the host's transaction that this one runs in (its snapshot predates it). Retrying after it ends answers its result.
 */
export class IdempotencyKeyInProgressException extends ConflictException {
  constructor(field: string) {
    super(`${field} is in use by a publish that has not finished yet; retry shortly to receive its result`);
  }
}
