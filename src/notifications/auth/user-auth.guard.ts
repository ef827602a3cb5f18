import { type CanActivate, type ExecutionContext, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import type { Request } from 'express';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions, UserIdResolver } from '../notifications-options.interface';
import { authenticatedUserId } from './authenticate-request';

export const USER_ID_RESOLVER = Symbol('USER_ID_RESOLVER');
export const AUTHENTICATED_USER_ID = Symbol('AUTHENTICATED_USER_ID');

export type AuthenticatedRequest = Request & { [AUTHENTICATED_USER_ID]?: number };

/** Lets a settings request through only with an authenticated numeric user id. */
@Injectable()
export class UserAuthGuard implements CanActivate {
  /** The 401 message: it names the bearer token only when the module checks JWTs itself, not a host's `resolveUserId`. */
  private readonly unauthenticatedMessage: string;

  constructor(
    @Inject(USER_ID_RESOLVER) private readonly resolveUserId: UserIdResolver,
    @Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions,
  ) {
    this.unauthenticatedMessage = options.resolveUserId ? 'Authentication is required' : 'A valid bearer token is required';
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const userId = await authenticatedUserId(request, this.resolveUserId);
    if (userId === undefined) throw new UnauthorizedException(this.unauthenticatedMessage);
    request[AUTHENTICATED_USER_ID] = userId;
    return true;
  }
}
