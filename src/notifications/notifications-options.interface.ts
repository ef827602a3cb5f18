import type { Request } from 'express';
import type { HostResolver } from './url-guard/url-guard';

/** Resolves the authenticated user of a settings request; `undefined` answers 401. */
export type UserIdResolver = (request: Request) => number | undefined | Promise<number | undefined>;

/** A key that encrypts signing secrets at rest (AES-256-GCM). */
export interface EncryptionKey {
  /** Stored next to every ciphertext, so keys can be rotated. 1–32 characters of [A-Za-z0-9_-]. */
  readonly id: string;
  /** Exactly 32 bytes. */
  readonly key: Buffer;
}

/** Options of {@link NotificationsModule}. */
export interface NotificationsModuleOptions {
  /**
   * Secret for `Authorization: Bearer <JWT>` (HS256) on the settings endpoints; the numeric
   * `sub` claim is the user id. Give either this or `resolveUserId`.
   */
  readonly jwtSecret?: string;
  /** Replaces JWT authentication with the host app's own user resolution. */
  readonly resolveUserId?: UserIdResolver;
  /** Encryption keys for signing secrets. The first one encrypts new secrets; all of them decrypt. */
  readonly encryptionKeys: readonly EncryptionKey[];
  /** Resolves webhook host names (default: the system resolver). Tests inject their own. */
  readonly resolver?: HostResolver;
  /**
   * CIDR ranges that webhook URLs may reach although they are not public (e.g. `127.0.0.0/8` for a
   * test receiver on loopback). Empty by default; never set it in production.
   */
  readonly allowedCidrs?: readonly string[];
}
