import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (value: string) => createHash('sha256').update(value).digest();

/** A shared-secret bearer token (service-to-service, metrics), compared in constant time. */
export class BearerToken {
  private readonly expected: Buffer;

  constructor(token: string) {
    this.expected = digest(token);
  }

  /** True when `Authorization` is `Bearer <token>` (the scheme in any case). */
  matches(authorization: string | undefined): boolean {
    const token = /^Bearer +(.+)$/i.exec(authorization ?? '')?.[1];
    return token !== undefined && timingSafeEqual(digest(token), this.expected);
  }
}
