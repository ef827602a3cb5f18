import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

/** The Standard Webhooks prefix of an Ed25519 public key: `whpk_` and the raw 32-byte key in base64. */
export const PUBLIC_KEY_PREFIX = 'whpk_';

// PKCS#8 wrapping of a raw 32-byte Ed25519 private key (RFC 8410), so node:crypto takes the seed as it is.
const PKCS8_ED25519 = Buffer.from('302e020100300506032b657004220420', 'hex');
// SubjectPublicKeyInfo wrapping of a raw 32-byte Ed25519 public key.
const SPKI_ED25519 = Buffer.from('302a300506032b6570032100', 'hex');

/** A new Ed25519 key pair: the private key as its 32-byte seed in base64 (what is sealed), the public key as `whpk_…`. */
export function generateSigningKeyPair(): { privateKey: string; publicKey: string } {
  const { privateKey } = generateKeyPairSync('ed25519');
  const seed = privateKey.export({ format: 'der', type: 'pkcs8' }).subarray(PKCS8_ED25519.length);
  return { privateKey: seed.toString('base64'), publicKey: publicKeyOf(privateKey) };
}

/** The private key of a base64 32-byte seed. */
export function signingKeyOf(seedBase64: string): KeyObject {
  const seed = Buffer.from(seedBase64, 'base64');
  if (seed.length !== 32) throw new Error('An Ed25519 private key seed is 32 bytes');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: 'der', type: 'pkcs8' });
}

/** `whpk_` and the base64 of the raw public key of this private key. */
export function publicKeyOf(privateKey: KeyObject): string {
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return PUBLIC_KEY_PREFIX + spki.subarray(SPKI_ED25519.length).toString('base64');
}

/** The public key of a `whpk_…` string (or of its bare base64), for `crypto.verify(null, …)`. */
export function verificationKeyOf(publicKey: string): KeyObject {
  const encoded = publicKey.startsWith(PUBLIC_KEY_PREFIX) ? publicKey.slice(PUBLIC_KEY_PREFIX.length) : publicKey;
  const raw = Buffer.from(encoded, 'base64');
  if (raw.length !== 32) throw new Error('An Ed25519 public key is 32 bytes');
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519, raw]), format: 'der', type: 'spki' });
}
