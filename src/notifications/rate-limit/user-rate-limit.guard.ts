import { type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ThrottlerGuard, type ThrottlerLimitDetail, type ThrottlerStorage } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { authenticatedUserId } from '../auth/authenticate-request';
import { USER_ID_RESOLVER } from '../auth/user-auth.guard';
import type { UserIdResolver } from '../notifications-options.interface';
import type { RateLimit, RateLimitTier } from './rate-limit-options';
import { RATE_LIMIT_TIER } from './rate-limit.decorator';
import { RATE_LIMIT_STORAGE, RATE_LIMITS } from './rate-limit.module';

/**
 * Limits the settings endpoints per user (per IP before authentication), so it runs before the auth
 * guard: a flood of bad tokens is limited too. Answers 429 with `Retry-After` in seconds.
 */
@Injectable()
export class UserRateLimitGuard extends ThrottlerGuard {
  private readonly enabled: boolean;

  constructor(
    @Inject(RATE_LIMITS) limits: Record<RateLimitTier, RateLimit> | null,
    @Inject(RATE_LIMIT_STORAGE) storage: ThrottlerStorage,
    reflector: Reflector,
    @Inject(USER_ID_RESOLVER) private readonly resolveUserId: UserIdResolver,
  ) {
    super(
      {
        // `settings` counts every endpoint; the other tiers only the routes marked @RateLimit(tier).
        throttlers: Object.entries(limits ?? {}).map(([name, { limit, ttlMs }]) => ({
          name,
          limit,
          ttl: ttlMs,
          setHeaders: false,
          skipIf:
            name === 'settings' ? undefined : (context: ExecutionContext) => reflector.get(RATE_LIMIT_TIER, context.getHandler()) !== name,
        })),
        errorMessage: (_, detail) => tooManyRequestsMessage(detail),
      },
      storage,
      reflector,
    );
    this.enabled = limits !== null;
  }

  override async onModuleInit(): Promise<void> {
    if (this.enabled) await super.onModuleInit();
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    return !this.enabled || super.canActivate(context);
  }

  protected override async getTracker(request: Request): Promise<string> {
    const userId = await authenticatedUserId(request, this.resolveUserId);
    return userId === undefined ? `ip:${await super.getTracker(request)}` : `user:${userId}`;
  }

  // One counter per tier and caller, across routes: the `settings` tier is a budget for the whole API.
  protected override generateKey(_: ExecutionContext, tracker: string, tier: string): string {
    return `notifications:${tier}:${tracker}`;
  }

  protected override async throwThrottlingException(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    context.switchToHttp().getResponse<Response>().setHeader('Retry-After', String(detail.timeToBlockExpire));
    return super.throwThrottlingException(context, detail);
  }
}

function tooManyRequestsMessage(detail: ThrottlerLimitDetail): string {
  return `Too many requests: at most ${detail.limit} per ${detail.ttl / 1000} s; retry after ${detail.timeToBlockExpire} s`;
}
