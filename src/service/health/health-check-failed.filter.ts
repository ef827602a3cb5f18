import { type ArgumentsHost, Catch, type ExceptionFilter, ServiceUnavailableException } from '@nestjs/common';
import type { Response } from 'express';

/** Keeps Terminus' report (which check is down) in the 503 body, instead of the API's generic error shape. */
@Catch(ServiceUnavailableException)
export class HealthCheckFailedFilter implements ExceptionFilter {
  catch(exception: ServiceUnavailableException, host: ArgumentsHost): void {
    host.switchToHttp().getResponse<Response>().status(exception.getStatus()).json(exception.getResponse());
  }
}
