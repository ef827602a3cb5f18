import { Module } from '@nestjs/common';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions, UserIdResolver } from '../notifications-options.interface';
import { jwtUserResolver } from './jwt-user-resolver';
import { USER_ID_RESOLVER, UserAuthGuard } from './user-auth.guard';

function userIdResolverFrom(options: NotificationsModuleOptions): UserIdResolver {
  if (options.resolveUserId && options.jwtSecret) {
    throw new Error('NotificationsModule: give either jwtSecret or resolveUserId, not both');
  }
  if (options.resolveUserId) return options.resolveUserId;
  if (options.jwtSecret)
    return jwtUserResolver(options.jwtSecret, {
      allowTokensWithoutExpiry: options.allowTokensWithoutExpiry,
      maxTokenLifetimeSeconds: options.maxTokenLifetimeSeconds,
      issuer: options.jwtIssuer,
      audience: options.jwtAudience,
    });
  throw new Error('NotificationsModule: jwtSecret or resolveUserId is required to authenticate settings requests');
}

/** Who is calling: the user id resolution of settings requests. */
@Module({
  providers: [{ provide: USER_ID_RESOLVER, inject: [NOTIFICATIONS_OPTIONS], useFactory: userIdResolverFrom }, UserAuthGuard],
  exports: [USER_ID_RESOLVER, UserAuthGuard],
})
export class AuthModule {}
