import { createHmac } from 'node:crypto';
import type { Request } from 'express';
import { jwtUserResolver, signUserToken } from './jwt-user-resolver';

const SECRET = 'jwt-resolver-spec-secret-0123456789abcdef';
const now = () => Math.floor(Date.now() / 1000);
const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** An HS256 token with exactly this header and these claims. */
function token(header: object, claims: object): string {
  const signingInput = `${base64url({ alg: 'HS256', typ: 'JWT', ...header })}.${base64url(claims)}`;
  return `${signingInput}.${createHmac('sha256', SECRET).update(signingInput).digest('base64url')}`;
}

const requestWith = (jwt: string) => ({ headers: { authorization: `Bearer ${jwt}` } }) as Request;

describe('jwtUserResolver', () => {
  const resolve = jwtUserResolver(SECRET);

  it('accepts a signed token with sub and exp', async () => {
    expect(await resolve(requestWith(token({}, { sub: '7', exp: now() + 60 })))).toBe(7);
    expect(await resolve(requestWith(signUserToken(SECRET, 8)))).toBe(8);
  });

  it.each([
    ['no exp', token({}, { sub: '7' })],
    ['no exp, only iat', token({}, { sub: '7', iat: now() })],
    ['a non-numeric exp', token({}, { sub: '7', exp: `${now() + 60}` })],
    [
      'an unknown crit header',
      token({ crit: ['http://example.com/must-understand'], 'http://example.com/must-understand': true }, { sub: '7', exp: now() + 60 }),
    ],
    ['a crit header naming b64', token({ crit: ['b64'], b64: false }, { sub: '7', exp: now() + 60 })],
    ['an empty crit header', token({ crit: [] }, { sub: '7', exp: now() + 60 })],
  ])('refuses a token with %s', async (_, jwt) => {
    expect(await resolve(requestWith(jwt))).toBeUndefined();
  });

  it('refuses a token whose lifetime (exp - iat, or exp - now without iat) exceeds the cap: 7 days by default', async () => {
    const week = 7 * 24 * 3600;
    expect(await resolve(requestWith(token({}, { sub: '7', iat: now(), exp: now() + week })))).toBe(7);
    expect(await resolve(requestWith(token({}, { sub: '7', iat: now(), exp: now() + week + 1 })))).toBeUndefined();
    expect(await resolve(requestWith(token({}, { sub: '7', exp: 253402300799 })))).toBeUndefined(); // the year 9999
    expect(await resolve(requestWith(token({}, { sub: '7', iat: now() - week, exp: now() + 60 })))).toBeUndefined();
    expect(await resolve(requestWith(token({}, { sub: '7', iat: now() + 3600, exp: now() + week + 60 })))).toBeUndefined(); // a future iat claims nothing
    const hour = jwtUserResolver(SECRET, { maxTokenLifetimeSeconds: 3600 });
    expect(await hour(requestWith(token({}, { sub: '7', iat: now(), exp: now() + 3600 })))).toBe(7);
    expect(await hour(requestWith(token({}, { sub: '7', iat: now(), exp: now() + 3601 })))).toBeUndefined();
  });

  it('accepts a token without exp when long-lived tokens are allowed, never one with crit', async () => {
    const lenient = jwtUserResolver(SECRET, { allowTokensWithoutExpiry: true });
    expect(await lenient(requestWith(token({}, { sub: '7' })))).toBe(7);
    expect(await lenient(requestWith(token({}, { sub: '7', exp: now() - 10 })))).toBeUndefined();
    expect(await lenient(requestWith(token({ crit: ['x'], x: 1 }, { sub: '7' })))).toBeUndefined();
  });
});
