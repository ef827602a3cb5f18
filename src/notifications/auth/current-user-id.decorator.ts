import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { AUTHENTICATED_USER_ID, type AuthenticatedRequest } from './user-auth.guard';

/** The id of the user that {@link UserAuthGuard} authenticated. */
export const CurrentUserId = createParamDecorator((_: unknown, context: ExecutionContext): number => {
  const userId = context.switchToHttp().getRequest<AuthenticatedRequest>()[AUTHENTICATED_USER_ID];
  if (userId === undefined) throw new Error('CurrentUserId used on a route without UserAuthGuard');
  return userId;
});
