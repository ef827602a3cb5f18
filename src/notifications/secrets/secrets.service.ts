import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { SecretCipher, UnknownEncryptionKeyError } from './secret-cipher';
import { generateSigningSecret } from './signing-secret';
import type { WebhookSigningSecret } from './webhook-signing-secret.entity';
import { WebhookSigningSecretRepository } from './webhook-signing-secret.repository';

/** Binds a ciphertext to its row: a ciphertext copied to another preference fails to open. */
export const associatedData = (preferenceId: number) => `webhook_signing_secrets:${preferenceId}`;

/** Owns webhook signing secrets: generation, encryption at rest and the one-time reveal. */
@Injectable()
export class SecretsService {
  private readonly logger = new Logger('WebhookSecrets');

  constructor(
    private readonly secrets: WebhookSigningSecretRepository,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
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
   * Replaces the preference's secret with a new one (or gives it its first) and returns it, to be
   * shown once. Every attempt from now on, pending retries included, is signed with it.
   */
  async rotateSecret(preferenceId: number): Promise<string> {
    const secret = generateSigningSecret();
    await this.secrets.replace(preferenceId, this.cipher.seal(secret, associatedData(preferenceId)));
    return secret;
  }

  preferenceIdsWithSecret(preferenceIds: readonly number[]): Promise<Set<number>> {
    return this.secrets.preferenceIdsWithSecret(preferenceIds);
  }

  /** The clear secret, for signing a delivery only; throws when it cannot be decrypted. */
  async secretForSigning(preferenceId: number): Promise<string | null> {
    const secret = (await this.secretsForSigning([preferenceId])).get(preferenceId) ?? null;
    if (secret instanceof Error) throw secret;
    return secret;
  }

  /**
   * The clear secrets of these preferences (those that have one), for signing deliveries only. A
   * secret that cannot be decrypted (its key id is not configured, or the row was tampered with) is
   * an Error in the map, so it fails that preference's deliveries only.
   */
  async secretsForSigning(preferenceIds: readonly number[]): Promise<Map<number, string | Error>> {
    const records = await this.secrets.findByPreferenceIds(preferenceIds);
    return new Map(records.map((record) => [record.preferenceId, this.open(record)]));
  }

  private open(record: WebhookSigningSecret): string | Error {
    try {
      return this.cipher.open(record, associatedData(record.preferenceId));
    } catch (error) {
      const reason = error instanceof UnknownEncryptionKeyError ? error.message : 'the ciphertext does not authenticate';
      this.logger.error(`Signing secret of webhook preference ${record.preferenceId} cannot be decrypted: ${reason}`);
      return new Error(`signing secret cannot be decrypted: ${reason}`);
    }
  }
}
