import { type CanActivate, type ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import type { Request } from 'express';
import { AuthService } from './auth.service';

export type AuthenticatedRequest = Request & { userId: number };

/** Our own guard, on our own controllers; NotificationsModule gets the same rule through `resolveUserId`. */
@Injectable()
export class AuthGuard implements CanActivate {
  constructor(private readonly auth: AuthService) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const userId = this.auth.userIdOf(request);
    if (userId === undefined) throw new UnauthorizedException();
    request.userId = userId;
    return true;
  }
}
