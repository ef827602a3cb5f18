import { HttpException, HttpStatus } from '@nestjs/common';

/** What `Retry-After` says on a 503 while the database is unavailable or slow. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * 503 Service Unavailable with `Retry-After`: the request was not carried out (nothing was acknowledged)
 * for a reason that passes, such as a database that is down or hangs; the client should send it again.
 * {@link ApiExceptionFilter} sets the header.
 */
export class RetryLaterException extends HttpException {
  constructor(
    message: string,
    readonly retryAfterSeconds: number = UNAVAILABLE_RETRY_AFTER_SECONDS,
  ) {
    super(message, HttpStatus.SERVICE_UNAVAILABLE);
  }

  /** The answer to a database error that {@link isDatabaseUnavailable} recognises. */
  static databaseUnavailable(): RetryLaterException {
    return new RetryLaterException(`The database is unavailable; retry after ${UNAVAILABLE_RETRY_AFTER_SECONDS} s`);
  }
}
