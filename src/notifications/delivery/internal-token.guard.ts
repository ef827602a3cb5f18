import { createHash, timingSafeEqual } from 'node:crypto';
import { type CanActivate, type ExecutionContext, Inject, Injectable, NotFoundException, UnauthorizedException } from '@nestjs/common';
import type { Request } from 'express';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Service-to-service calls: `Authorization: Bearer <internalApiToken>`; the routes do not exist without a token. */
@Injectable()
export class InternalTokenGuard implements CanActivate {
  private readonly expected: Buffer | null;

  constructor(@Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions) {
    this.expected = options.internalApiToken ? digest(options.internalApiToken) : null;
  }

  canActivate(context: ExecutionContext): boolean {
    if (!this.expected) throw new NotFoundException();
    const header = context.switchToHttp().getRequest<Request>().headers.authorization ?? '';
    const token = header.startsWith('Bearer ') ? header.slice(7) : '';
    if (!token || !timingSafeEqual(digest(token), this.expected)) throw new UnauthorizedException('A valid internal API token is required');
    return true;
  }
}
