import { type CanActivate, type ExecutionContext, Inject, Injectable, NotFoundException, UnauthorizedException } from '@nestjs/common';
import type { Request } from 'express';
import { BearerToken } from '../common/bearer-token';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';

/** Service-to-service calls: `Authorization: Bearer <internalApiToken>`; the routes do not exist without a token. */
@Injectable()
export class InternalTokenGuard implements CanActivate {
  private readonly expected: BearerToken | null;

  constructor(@Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions) {
    this.expected = options.internalApiToken ? new BearerToken(options.internalApiToken) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expected) throw new NotFoundException();
    if (!this.expected.matches(context.switchToHttp().getRequest<Request>().headers.authorization))
      throw new UnauthorizedException('A valid internal API token is required');
    return true;
  }
}
