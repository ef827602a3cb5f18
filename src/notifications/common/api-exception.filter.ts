import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, HttpStatus, Logger } from '@nestjs/common';
import type { Response } from 'express';
import type { FieldError } from './api-errors';
import type { ErrorResponseDto } from './error-response.dto';

const REASON_PHRASES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

function toBody(status: number, response: unknown): ErrorResponseDto {
  const error = REASON_PHRASES[status] ?? 'Error';
  if (typeof response === 'string') return { statusCode: status, error, message: response };
  const { message, errors } = (response ?? {}) as { message?: unknown; errors?: FieldError[] };
  const text = Array.isArray(message) ? message.join('; ') : typeof message === 'string' ? message : error;
  return errors ? { statusCode: status, error, message: text, errors } : { statusCode: status, error, message: text };
}

/** Maps every error to the one documented error shape; unknown errors become a bare 500 with a logged stack. */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Notifications');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      response.status(status).json(toBody(status, exception.getResponse()));
      return;
    }
    this.logger.error('Unhandled error', exception instanceof Error ? exception.stack : String(exception));
    response.status(HttpStatus.INTERNAL_SERVER_ERROR).json(toBody(500, 'Internal server error'));
  }
}
