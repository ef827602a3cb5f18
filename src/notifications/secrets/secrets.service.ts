import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../clock/clock';
import { type SealedSecret, SecretCipher, UnknownEncryptionKeyError } from './secret-cipher';
import { generateSigningSecret } from './signing-secret';
import type { StoredSigningSecret } from './webhook-signing-secret.entity';
import { WebhookSigningSecretRepository } from './webhook-signing-secret.repository';

/** Binds a ciphertext to its row: a ciphertext copied to another preference fails to open. */
export const associatedData = (preferenceId: number) => `webhook_signing_secrets:${preferenceId}`;

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
