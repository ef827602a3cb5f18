import { randomBytes } from 'node:crypto';
import { SecretCipher, UnknownEncryptionKeyError } from './secret-cipher';
import { generateSigningSecret } from './signing-secret';

const key = (id: string) => ({ id, key: randomBytes(32) });

describe('SecretCipher', () => {
  const secret = generateSigningSecret();

  it('round-trips a secret and never stores it in clear text', () => {
    const cipher = new SecretCipher([key('k1')]);
    const sealed = cipher.seal(secret, 'preference:1');
    expect(sealed.keyId).toBe('k1');
    expect(sealed.ciphertext).not.toContain(secret.slice(6));
    expect(Buffer.from(sealed.ciphertext, 'base64').toString('latin1')).not.toContain(secret.slice(6));
    expect(cipher.open(sealed, 'preference:1')).toBe(secret);
  });

  it('uses a fresh IV for every seal', () => {
    const cipher = new SecretCipher([key('k1')]);
    expect(cipher.seal(secret, 'a').ciphertext).not.toBe(cipher.seal(secret, 'a').ciphertext);
  });

  it('refuses a ciphertext moved to another row', () => {
    const cipher = new SecretCipher([key('k1')]);
    const sealed = cipher.seal(secret, 'preference:1');
    expect(() => cipher.open(sealed, 'preference:2')).toThrow();
  });

  it('still refuses a ciphertext moved to another row, or named with another key, once it opened in its own', () => {
    const cipher = new SecretCipher([key('k1'), key('k2')]);
    const sealed = cipher.seal(secret, 'preference:1');
    expect(cipher.open(sealed, 'preference:1')).toBe(secret);
    expect(cipher.open(sealed, 'preference:1')).toBe(secret);
    expect(() => cipher.open(sealed, 'preference:2')).toThrow();
    expect(() => cipher.open({ ...sealed, keyId: 'k2' }, 'preference:1')).toThrow();
    expect(() => cipher.open({ ...sealed, keyId: 'k3' }, 'preference:1')).toThrow(UnknownEncryptionKeyError);
  });

  it('refuses a tampered ciphertext', () => {
    const cipher = new SecretCipher([key('k1')]);
    const sealed = cipher.seal(secret, 'p');
    const raw = Buffer.from(sealed.ciphertext, 'base64');
    raw[raw.length - 1] ^= 1;
    expect(() => cipher.open({ ...sealed, ciphertext: raw.toString('base64') }, 'p')).toThrow();
  });

  it.each([4, 8, 12, 15])(
    'refuses a record whose auth tag is cut to %i bytes (forging it would take 2^(8n) tries, not 2^128)',
    (tagBytes) => {
      const cipher = new SecretCipher([key('k1')]);
      // An empty plaintext leaves iv ‖ tag: cut the tag and nothing else changes, so only its length can refuse it.
      const raw = Buffer.from(cipher.seal('', 'p').ciphertext, 'base64');
      const truncated = { keyId: 'k1', ciphertext: raw.subarray(0, 12 + tagBytes).toString('base64') };
      expect(() => cipher.open(truncated, 'p')).toThrow();
    },
  );

  it('seals with the first key and still opens records of older keys', () => {
    const oldKey = key('old');
    const sealedWithOld = new SecretCipher([oldKey]).seal(secret, 'p');
    const rotated = new SecretCipher([key('new'), oldKey]);
    expect(rotated.open(sealedWithOld, 'p')).toBe(secret);
    expect(rotated.seal(secret, 'p').keyId).toBe('new');
  });

  it('names the key id, and never the secret, when a record was sealed with a key that is not configured', () => {
    const sealed = new SecretCipher([key('retired')]).seal(secret, 'p');
    const failure = (() => {
      try {
        new SecretCipher([key('new')]).open(sealed, 'p');
      } catch (error) {
        return error as Error;
      }
    })();
    expect(failure).toBeInstanceOf(UnknownEncryptionKeyError);
    expect(failure?.message).toBe('No encryption key with id "retired" is configured');
  });

  it('refuses a record whose key id names a different key than the one that sealed it', () => {
    const sealed = new SecretCipher([key('k1')]).seal(secret, 'p');
    expect(() => new SecretCipher([key('k1')]).open(sealed, 'p')).toThrow();
  });

  it.each([
    [[], 'At least one'],
    [[{ id: 'k1', key: randomBytes(16) }], 'must be 32 bytes'],
    [[{ id: 'bad id', key: randomBytes(32) }], 'must be 1-32 characters'],
    [
      [
        { id: 'k1', key: randomBytes(32) },
        { id: 'k1', key: randomBytes(32) },
      ],
      'unique',
    ],
  ])('rejects a bad key ring %#', (keys, message) => {
    expect(() => new SecretCipher(keys)).toThrow(message);
  });

  it('generates whsec_ secrets with 32 random bytes', () => {
    const generated = generateSigningSecret();
    expect(generated).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(generated.slice(6), 'base64url')).toHaveLength(32);
    expect(generateSigningSecret()).not.toBe(generated);
  });
});
