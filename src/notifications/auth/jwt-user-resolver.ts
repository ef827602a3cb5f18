import { JwtService } from '@nestjs/jwt';
import type { Request } from 'express';
import type { UserIdResolver } from '../notifications-options.interface';

const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*)$/;

/** A positive integer in the JS safe range, given as a number or as a string of digits. */
export function parseUserId(value: unknown): number | undefined {
  const id = typeof value === 'string' && /^[1-9][0-9]{0,15}$/.test(value) ? Number(value) : value;
  return typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** Verifies `Authorization: Bearer <JWT>` signed HS256 with `secret`; the user id is the numeric `sub`. */
export function jwtUserResolver(secret: string): UserIdResolver {
  const jwt = new JwtService({ secret, verifyOptions: { algorithms: ['HS256'] } });
  return async (request: Request) => {
    const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
    if (!token) return undefined;
    try {
      const claims = await jwt.verifyAsync<{ sub?: unknown }>(token);
      return parseUserId(claims.sub);
    } catch {
      return undefined;
    }
  };
}

/** Signs a token accepted by {@link jwtUserResolver}, for local use and tests. */
export function signUserToken(secret: string, userId: number, expiresInSeconds = 24 * 3600): string {
  return new JwtService({ secret }).sign({ sub: String(userId) }, { algorithm: 'HS256', expiresIn: expiresInSeconds });
}
