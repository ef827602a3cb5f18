import { createCipheriv, createDecipheriv, createSecretKey, type KeyObject, randomBytes } from 'node:crypto';
import type { EncryptionKey } from '../notifications-options.interface';

const ALGORITHM = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
/** Opened secrets kept, the most recently used: every attempt signs with its webhook's, and a claim reads them again. */
const OPENED_KEPT = 10_000;

/** A ciphertext names a key id that is not in the key ring. The message names the key id only. */
export class UnknownEncryptionKeyError extends Error {
  constructor(readonly keyId: string) {
    super(`No encryption key with id "${keyId}" is configured`);
    this.name = 'UnknownEncryptionKeyError';
  }
}

export interface SealedSecret {
  readonly keyId: string;
  /** base64 of iv ‖ auth tag ‖ ciphertext. */
  readonly ciphertext: string;
}

/**
 * AES-256-GCM with a key ring: seals with the first key, opens with the key named in the record.
 * The associated data binds a ciphertext to its row, so a ciphertext copied to another row fails to open.
 */
export class SecretCipher {
  /** KeyObjects, not Buffers: Node 24 checks a Buffer key for a KeyObject and a CryptoKey by throwing, 10 µs a call. */
  private readonly keys: ReadonlyMap<string, KeyObject>;
  private readonly primary: { readonly id: string; readonly key: KeyObject };
  /** Plaintexts by key id, associated data and ciphertext, each opened (authenticated) once; a ring never changes. */
  private readonly opened = new Map<string, string>();

  constructor(keys: readonly EncryptionKey[]) {
    if (keys.length === 0) throw new Error('At least one secrets encryption key is required');
    for (const { id, key } of keys) {
      if (!KEY_ID.test(id)) throw new Error(`Encryption key id "${id}" must be 1-32 characters of A-Z a-z 0-9 _ -`);
      if (key.length !== 32) throw new Error(`Encryption key "${id}" must be 32 bytes, got ${key.length}`);
    }
    this.keys = new Map(keys.map(({ id, key }) => [id, createSecretKey(key)]));
    if (this.keys.size !== keys.length) throw new Error('Encryption key ids must be unique');
    this.primary = { id: keys[0].id, key: this.keys.get(keys[0].id)! };
  }

  /** The id of the key that seals new secrets (the first one). */
  get primaryKeyId(): string {
    return this.primary.id;
  }

  hasKey(keyId: string): boolean {
    return this.keys.has(keyId);
  }

  seal(plaintext: string, associatedData: string): SealedSecret {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(ALGORITHM, this.primary.key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const encrypted = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return { keyId: this.primary.id, ciphertext: Buffer.concat([iv, cipher.getAuthTag(), encrypted]).toString('base64') };
  }

  /**
   * The plaintext of `sealed`, bound to `associatedData`. What opened once is kept (in memory only, the most recently
   * used {@link OPENED_KEPT}): the same key id, associated data and ciphertext always open to the same plaintext.
   */
  open(sealed: SealedSecret, associatedData: string): string {
    const key = this.keys.get(sealed.keyId);
    if (!key) throw new UnknownEncryptionKeyError(sealed.keyId);
    // A ring's key id holds no line break, and the length marks where the associated data ends: one string per triple.
    const kept = `${sealed.keyId}\n${associatedData.length}\n${associatedData}${sealed.ciphertext}`;
    const plaintext = this.opened.get(kept);
    if (plaintext !== undefined) {
      this.opened.delete(kept); // kept last: the most recently used
      this.opened.set(kept, plaintext);
      return plaintext;
    }
    const opened = this.decrypt(key, sealed, associatedData);
    if (this.opened.size >= OPENED_KEPT) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(kept, opened);
    return opened;
  }

  private decrypt(key: KeyObject, sealed: SealedSecret, associatedData: string): string {
    const raw = Buffer.from(sealed.ciphertext, 'base64');
    // GCM accepts tags cut to 4 bytes unless told the length: a cut tag is forged in 2^32 tries, not 2^128.
    if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('Ciphertext is too short to hold its IV and a 16-byte auth tag');
    const decipher = createDecipheriv(ALGORITHM, key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  }
}
