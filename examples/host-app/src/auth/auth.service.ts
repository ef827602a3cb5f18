import { Injectable } from '@nestjs/common';
import type { Request } from 'express';

/**
 * EXAMPLE ONLY, NOT FOR PRODUCTION: our (imagined) API gateway authenticates every request and forwards the user id in
 * `x-user-id`, and this app believes it. Anyone who reaches the app other than through that gateway, or through a gateway
 * that passes a client's own `x-user-id` on, is whoever they say they are. A real host authenticates here (a session, a
 * verified JWT, or a header the gateway signs and this app verifies); `hostConfigFromEnv` refuses NODE_ENV=production.
 */
@Injectable()
export class AuthService {
  userIdOf(request: Request): number | undefined {
    const id = Number(request.header('x-user-id'));
    return Number.isSafeInteger(id) && id > 0 ? id : undefined;
  }
}
