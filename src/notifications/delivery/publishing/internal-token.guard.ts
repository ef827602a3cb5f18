import {
  type CanActivate,
  type ExecutionContext,
  HttpException,
  HttpStatus,
  Inject,
  Injectable,
  NotFoundException,
  UnauthorizedException,
} from '@nestjs/common';
import type { Request, Response } from 'express';
import { Clock } from '../../clock/clock';
import { BearerToken } from '../../common/api/bearer-token';
import { NOTIFICATIONS_OPTIONS } from '../../notifications.module-definition';
import type { NotificationsModuleOptions } from '../../notifications-options.interface';
import { ClockThrottlerStorage } from '../../rate-limit/clock-throttler-storage';

/** Wrong internal tokens one client address may send per minute before it gets 429 (right tokens are never limited). */
export const INTERNAL_TOKEN_FAILURES_PER_MINUTE = 20;
const FAILURE_WINDOW_MS = 60_000;

/**
 * Service-to-service calls: `Authorization: Bearer <internalApiToken>`; the routes do not exist without a token.
 * A client address that keeps sending wrong tokens is answered 429 with `Retry-After` (guessing gets slow),
 * counted per instance.
 */
@Injectable()
export class InternalTokenGuard implements CanActivate {
  private readonly expected: BearerToken | null;
  /** Null when the module's rate limits are off (`rateLimits: false`). */
  private readonly failures: ClockThrottlerStorage | null;

  constructor(@Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions, clock: Clock) {
    this.expected = options.internalApiToken ? new BearerToken(options.internalApiToken) : null;
    this.failures = options.rateLimits === false ? null : new ClockThrottlerStorage(clock);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.expected) throw new NotFoundException();
    const request = context.switchToHttp().getRequest<Request>();
    if (this.expected.matches(request.headers.authorization)) return true;
    const failures = await this.failures?.increment(
      `internal-token-failures:${request.ip ?? 'unknown'}`,
      FAILURE_WINDOW_MS,
      INTERNAL_TOKEN_FAILURES_PER_MINUTE,
    );
    if (failures?.isBlocked) {
      context.switchToHttp().getResponse<Response>().setHeader('Retry-After', String(failures.timeToBlockExpire));
      throw new HttpException('Too many requests with a wrong internal API token; retry later', HttpStatus.TOO_MANY_REQUESTS);
    }
    throw new UnauthorizedException('A valid internal API token is required');
  }
}
