import { STATUS_CODES } from 'node:http';
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { FieldError } from './api-errors';
import type { ErrorResponseDto } from './error-response.dto';

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

/** Maps every error to the one documented error shape; unknown errors become a bare 500 with a logged stack. */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Notifications');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      response.status(status).json(toBody(status, bodyParserMessage(exception) ?? exception.getResponse()));
      return;
    }
    const request = http.getRequest<Request>();
    this.logger.error(`Unhandled error on ${request.method} ${request.path}`, exception instanceof Error ? exception.stack : String(exception));
    response.status(HttpStatus.INTERNAL_SERVER_ERROR).json(toBody(500, 'Internal server error'));
  }
}
