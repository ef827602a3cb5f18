import { createHmac } from 'node:crypto';

/** An HS256 user token as `npm run token -- <userId>` makes it: `sub` = the user id, valid for an hour. */
export function devToken(jwtSecret: string, userId: number): string {
  const now = Math.floor(Date.now() / 1000);
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ sub: String(userId), iat: now, exp: now + 3600 })}`;
  return `${unsigned}.${createHmac('sha256', jwtSecret).update(unsigned).digest('base64url')}`;
}
