import type { KeyObject } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../clock/clock';
import { type SealedSecret, SecretCipher, UnknownEncryptionKeyError } from './secret-cipher';
import { generateSigningKeyPair, signingKeyOf } from './signing-key';
import { generateSigningSecret } from './signing-secret';
import type { StoredSigningKey } from './webhook-signing-key.entity';
import { type SealedKeyPair, WebhookSigningKeyRepository } from './webhook-signing-key.repository';
import type { StoredSigningSecret } from './webhook-signing-secret.entity';
import { WebhookSigningSecretRepository } from './webhook-signing-secret.repository';

/** Binds a ciphertext to its row: a ciphertext copied to another preference fails to open. */
export const associatedData = (preferenceId: number) => `webhook_signing_secrets:${preferenceId}`;

/** Binds a sealed Ed25519 private key to its row (and apart from the secret of the same preference). */
export const keyAssociatedData = (preferenceId: number) => `webhook_signing_keys:${preferenceId}`;

/** The public side of a webhook's Ed25519 key pair, as the settings API shows it. */
export interface PublicSigningKeys {
  /** `whpk_…`: what receivers verify `v1a` signatures with. */
  readonly publicKey: string;
  /** During a key rotation's overlap, the public key before it (its private key signs too) and until when (epoch ms). */
  readonly previousPublicKey: string | null;
  readonly previousUntil: number | null;
}

/** What signs a webhook's deliveries now: its secret, and during a rotation's overlap the one before it. */
export interface SigningSecrets {
  readonly secret: string;
  /** Signs `webhook-signature` too (never `X-Service-Signature`) until the overlap ends; null outside one. */
  readonly previous: string | null;
}

/** A rotated secret: the new one, shown once, and until when (epoch ms) the one before it still signs, if at all. */
export interface RotatedSecret {
  readonly secret: string;
  readonly previousUntil: number | null;
}

/** Owns webhook signing secrets: generation, encryption at rest and the one-time reveal. */
@Injectable()
export class SecretsService {
  private readonly logger = new Logger('WebhookSecrets');

  constructor(
    private readonly secrets: WebhookSigningSecretRepository,
    private readonly keys: WebhookSigningKeyRepository,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
    private readonly clock: Clock,
  ) {}

  /**
   * Gives the preference a signing secret if it has none, inside the transaction of `manager` when given. Returns
   * the new secret, to be shown once, or null when one existed already (it is never returned again). Of concurrent
   * calls for one preference, one writes the secret (a unique index) and only that one returns it.
   */
  async ensureSecret(preferenceId: number, manager?: EntityManager): Promise<string | null> {
    const secrets = manager ? this.secrets.in(manager) : this.secrets;
    if (await secrets.findByPreferenceId(preferenceId)) return null;
    const secret = generateSigningSecret();
    const created = await secrets.insertIfAbsent(preferenceId, this.cipher.seal(secret, associatedData(preferenceId)));
    return created ? secret : null;
  }

  /**
   * Replaces the preference's secret with a new one (or gives it its first) and returns it, to be shown once. Every
   * attempt from now on, pending retries included, is signed with it; with an overlap, the secret it replaces also
   * signs `webhook-signature` for that long (a receiver that still has it verifies meanwhile).
   */
  async rotateSecret(preferenceId: number, overlapMs = 0): Promise<RotatedSecret> {
    const secret = generateSigningSecret();
    const previousUntil = overlapMs > 0 ? this.clock.now() + overlapMs : null;
    const kept = await this.secrets.replace(preferenceId, this.cipher.seal(secret, associatedData(preferenceId)), previousUntil);
    return { secret, previousUntil: kept ? previousUntil : null };
  }

  preferenceIdsWithSecret(preferenceIds: readonly number[]): Promise<Set<number>> {
    return this.secrets.preferenceIdsWithSecret(preferenceIds);
  }

  /** The clear secrets, for signing a delivery only; throws when the secret cannot be decrypted. */
  async secretForSigning(preferenceId: number): Promise<SigningSecrets | null> {
    const record = await this.secrets.findByPreferenceId(preferenceId);
    const secret = record ? this.openForSigning([record]).get(preferenceId)! : null;
    if (secret instanceof Error) throw secret;
    return secret;
  }

  /**
   * The clear secrets of these stored ones (read with their preferences, on the delivery path), for signing deliveries
   * only, by preference id. A secret that cannot be decrypted (its key id is not configured, or the row was tampered
   * with) is an Error in the map, so it fails that preference's deliveries only.
   */
  openForSigning(records: readonly StoredSigningSecret[]): Map<number, SigningSecrets | Error> {
    const now = this.clock.now();
    return new Map(
      records.map((record) => {
        const secret = this.open(record, record);
        return [record.preferenceId, secret instanceof Error ? secret : { secret, previous: this.previousOf(record, now) }];
      }),
    );
  }

  /** The secret before a rotation while its overlap runs; one that cannot be decrypted is left out (logged). */
  private previousOf(record: StoredSigningSecret, now: number): string | null {
    const { previousKeyId: keyId, previousCiphertext: ciphertext, previousUntil } = record;
    if (keyId === null || ciphertext === null || previousUntil === null || previousUntil <= now) return null;
    const previous = this.open(record, { keyId, ciphertext }, 'Previous signing secret');
    return previous instanceof Error ? null : previous;
  }

  /**
   * Gives the preference an Ed25519 key pair if it has none, inside the transaction of `manager` when given. The
   * private key is sealed at rest and never leaves this service but as a signing key; the public key is shown.
   */
  async ensureSigningKey(preferenceId: number, manager?: EntityManager): Promise<void> {
    const keys = manager ? this.keys.in(manager) : this.keys;
    if (await keys.findByPreferenceId(preferenceId)) return;
    await keys.insertIfAbsent(preferenceId, this.sealKeyPair(preferenceId));
  }

  /**
   * Replaces the preference's key pair (or gives it its first). With an overlap, the pair it replaces also signs
   * `v1a` for that long, so a receiver that still has the old public key verifies meanwhile.
   */
  async rotateSigningKey(preferenceId: number, overlapMs = 0): Promise<void> {
    const previousUntil = overlapMs > 0 ? this.clock.now() + overlapMs : null;
    await this.keys.replace(preferenceId, this.sealKeyPair(preferenceId), previousUntil);
  }

  /** The public keys of these preferences, by preference id (the previous one only while its overlap runs). */
  async publicSigningKeys(preferenceIds: readonly number[]): Promise<Map<number, PublicSigningKeys>> {
    const now = this.clock.now();
    const rows = await this.keys.publicKeys(preferenceIds);
    return new Map(
      rows.map((row) => {
        const overlapping = row.previousPublicKey !== null && row.previousUntil !== null && row.previousUntil > now;
        const previous = overlapping ? { previousPublicKey: row.previousPublicKey, previousUntil: row.previousUntil } : null;
        return [row.preferenceId, { publicKey: row.publicKey, previousPublicKey: null, previousUntil: null, ...previous }];
      }),
    );
  }

  /** The private keys of a preference, for signing only (current first); empty when it has none. Throws when one cannot be decrypted. */
  async signingKeysFor(preferenceId: number): Promise<KeyObject[]> {
    const record = await this.keys.findByPreferenceId(preferenceId);
    if (!record) return [];
    const opened = this.openSigningKeys([record]).get(preferenceId)!;
    if (opened instanceof Error) throw opened;
    return opened;
  }

  /**
   * The Ed25519 private keys of these stored pairs, for signing deliveries only, by preference id: the current one,
   * then the previous one while its overlap runs. A key that cannot be decrypted is an Error in the map (the previous
   * one is left out, logged), so it fails that webhook's deliveries only.
   */
  openSigningKeys(records: readonly StoredSigningKey[]): Map<number, KeyObject[] | Error> {
    const now = this.clock.now();
    return new Map(
      records.map((record): [number, KeyObject[] | Error] => {
        const current = this.openKey(record, record, 'Signing key');
        if (current instanceof Error) return [record.preferenceId, current];
        const { previousKeyId: keyId, previousCiphertext: ciphertext, previousUntil } = record;
        const overlapping = keyId !== null && ciphertext !== null && previousUntil !== null && previousUntil > now;
        const previous = overlapping ? this.openKey(record, { keyId, ciphertext }, 'Previous signing key') : null;
        return [record.preferenceId, previous && !(previous instanceof Error) ? [current, previous] : [current]];
      }),
    );
  }

  private sealKeyPair(preferenceId: number): SealedKeyPair {
    const pair = generateSigningKeyPair();
    return { sealed: this.cipher.seal(pair.privateKey, keyAssociatedData(preferenceId)), publicKey: pair.publicKey };
  }

  private openKey(record: StoredSigningKey, sealed: SealedSecret, what: 'Signing key' | 'Previous signing key'): KeyObject | Error {
    try {
      return signingKeyOf(this.cipher.open(sealed, keyAssociatedData(record.preferenceId)));
    } catch (error) {
      const reason = error instanceof UnknownEncryptionKeyError ? error.message : 'the ciphertext does not authenticate';
      this.logger.error(`${what} of webhook preference ${record.preferenceId} cannot be decrypted: ${reason}`);
      return new Error(`${what.toLowerCase()} cannot be decrypted: ${reason}`);
    }
  }

  private open(
    record: StoredSigningSecret,
    sealed: SealedSecret,
    what: 'Signing secret' | 'Previous signing secret' = 'Signing secret',
  ): string | Error {
    try {
      return this.cipher.open(sealed, associatedData(record.preferenceId));
    } catch (error) {
      const reason = error instanceof UnknownEncryptionKeyError ? error.message : 'the ciphertext does not authenticate';
      this.logger.error(`${what} of webhook preference ${record.preferenceId} cannot be decrypted: ${reason}`);
      return new Error(`${what.toLowerCase()} cannot be decrypted: ${reason}`);
    }
  }
}
