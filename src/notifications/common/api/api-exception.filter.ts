import { STATUS_CODES } from 'node:http';
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { FieldError } from './api-errors';
import { isDatabaseUnavailable } from '../database/database-errors';
import type { ErrorResponseDto } from './error-response.dto';
import { RetryLaterException } from './retry-later.exception';

function toBody(status: number, response: unknown): ErrorResponseDto {
  const error = STATUS_CODES[status] ?? 'Error';
  if (typeof response === 'string') return { statusCode: status, error, message: response };
  const { message, errors } = (response ?? {}) as { message?: unknown; errors?: FieldError[] };
  const text = Array.isArray(message) ? message.join('; ') : typeof message === 'string' ? message : error;
  return errors ? { statusCode: status, error, message: text, errors } : { statusCode: status, error, message: text };
}

/** body-parser's errors reach us wrapped in an HttpException; say plainly what was wrong with the body. */
function bodyParserMessage(exception: HttpException): string | undefined {
  const cause = exception.cause as { type?: unknown; limit?: unknown; message?: unknown } | undefined;
  if (cause?.type === 'entity.parse.failed') return `Request body is not valid JSON: ${String(cause.message)}`;
  if (cause?.type === 'entity.too.large') return `Request body is larger than the limit of ${String(cause.limit)} bytes`;
  return undefined;
}

/** The driver's code and message, for the log (a database error never reaches the client). */
function describeDatabaseError(error: unknown): string {
  const driver = (error as { driverError?: unknown }).driverError ?? error;
  const { code, message } = (driver ?? {}) as { code?: unknown; message?: unknown };
  return [code, message].filter((part) => typeof part === 'string' && part !== '').join(': ') || String(error);
}

/**
 * Maps every error to the one documented error shape: a database that is down, hangs or is busy becomes
 * 503 with `Retry-After` (logged at warn, without a stack); unknown errors become a bare 500 with a logged stack.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Notifications');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    if (!(exception instanceof HttpException) && isDatabaseUnavailable(exception)) {
      this.logger.warn(`Database unavailable on ${request.method} ${request.path}: ${describeDatabaseError(exception)}; answered 503`);
      exception = RetryLaterException.databaseUnavailable();
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (exception instanceof RetryLaterException) response.setHeader('Retry-After', String(exception.retryAfterSeconds));
      response.status(status).json(toBody(status, bodyParserMessage(exception) ?? exception.getResponse()));
      return;
    }
    this.logger.error(
      `Unhandled error on ${request.method} ${request.path}`,
      exception instanceof Error ? exception.stack : String(exception),
    );
    response.status(HttpStatus.INTERNAL_SERVER_ERROR).json(toBody(500, 'Internal server error'));
  }
}
