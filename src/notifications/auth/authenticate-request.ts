import type { Request } from 'express';
import type { UserIdResolver } from '../notifications-options.interface';
import { parseUserId } from './user-id';

const RESOLUTION = Symbol('USER_ID_RESOLUTION');

type ResolvingRequest = Request & { [RESOLUTION]?: Promise<number | undefined> };

/**
 * The request's user id, or `undefined` when it is not authenticated. Resolved once per request:
 * the rate limiter (which runs first, to limit unauthenticated callers by IP) and the auth guard share it.
 */
export function authenticatedUserId(request: Request, resolve: UserIdResolver): Promise<number | undefined> {
  const resolving = request as ResolvingRequest;
  resolving[RESOLUTION] ??= Promise.resolve()
    .then(() => resolve(request))
    .then(parseUserId);
  return resolving[RESOLUTION];
}
