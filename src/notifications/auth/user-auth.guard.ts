import { type CanActivate, type ExecutionContext, Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import type { Request } from 'express';
import type { UserIdResolver } from '../notifications-options.interface';
import { authenticatedUserId } from './authenticate-request';

export const USER_ID_RESOLVER = Symbol('USER_ID_RESOLVER');
export const AUTHENTICATED_USER_ID = Symbol('AUTHENTICATED_USER_ID');

export type AuthenticatedRequest = Request & { [AUTHENTICATED_USER_ID]?: number };

/** Lets a settings request through only with an authenticated numeric user id. */
@Injectable()
export class UserAuthGuard implements CanActivate {
  constructor(@Inject(USER_ID_RESOLVER) private readonly resolveUserId: UserIdResolver) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const userId = await authenticatedUserId(request, this.resolveUserId);
    if (userId === undefined) throw new UnauthorizedException('A valid bearer token is required');
    request[AUTHENTICATED_USER_ID] = userId;
    return true;
  }
}
