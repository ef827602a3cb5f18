import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { EncryptionKey } from '../notifications-options.interface';
import { Clock, SystemClock } from '../clock/clock';
import { type SealedSecret, SecretCipher, UnknownEncryptionKeyError } from './secret-cipher';
import { associatedData } from './secrets.service';
import { WebhookSigningSecret } from './webhook-signing-secret.entity';
import { WebhookSigningSecretRepository } from './webhook-signing-secret.repository';

/** What one re-encryption run did. */
export interface ReencryptionReport {
  /** The newest key, which every secret is sealed with afterwards. */
  readonly keyId: string;
  /** Secrets already sealed with it when the run started. */
  readonly alreadyCurrent: number;
  /** Secrets this run re-sealed with it. */
  readonly reencrypted: number;
  /** Secrets rewritten by someone else (a rotation) between read and write, left as they were. */
  readonly changedMeanwhile: number;
}

/** Some secrets were sealed with keys that are not configured; nothing was changed. */
export class UnconfiguredKeysError extends Error {
  constructor(readonly rowsByKeyId: ReadonlyMap<string, number>) {
    const list = [...rowsByKeyId].map(([keyId, rows]) => `"${keyId}" (${rows} secret${rows === 1 ? '' : 's'})`).join(', ');
    super(
      `Signing secrets are sealed with encryption key id(s) that are not configured: ${list}. Configure those keys after the newest one and run again.`,
    );
    this.name = 'UnconfiguredKeysError';
  }
}

export const REENCRYPTION_BATCH_SIZE = 500;

/**
 * Re-seals every signing secret with the newest encryption key, in batches, so older keys can be
 * retired. Idempotent, and safe while the service runs: a row is only written if it is still what was
 * read, so a secret rotated meanwhile is never overwritten with its old value.
 *
 * @publicApi
 */
@Injectable()
export class SecretsReencryption {
  constructor(
    private readonly secrets: WebhookSigningSecretRepository,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
    private readonly clock: Clock,
  ) {}

  /**
   * Outside a Nest application (a command-line run): over the DataSource holding the module's tables, with the key ring
   * the module is configured with (newest first).
   */
  static overDataSource(
    dataSource: DataSource,
    encryptionKeys: readonly EncryptionKey[],
    clock: Clock = new SystemClock(),
  ): SecretsReencryption {
    const secrets = new WebhookSigningSecretRepository(dataSource.getRepository(WebhookSigningSecret));
    return new SecretsReencryption(secrets, new SecretCipher(encryptionKeys), clock);
  }

  /** How many signing secrets each encryption key id seals now. */
  secretsByKeyId(): Promise<ReadonlyMap<string, number>> {
    return this.secrets.countByKeyId();
  }

  async run(batchSize = REENCRYPTION_BATCH_SIZE): Promise<ReencryptionReport> {
    const keyId = this.cipher.primaryKeyId;
    const counts = await this.secrets.countByKeyId();
    const unconfigured = new Map([...counts].filter(([id]) => !this.cipher.hasKey(id)));
    if (unconfigured.size > 0) throw new UnconfiguredKeysError(unconfigured);

    let reencrypted = 0;
    let changedMeanwhile = 0;
    let afterId = 0;
    for (;;) {
      const batch = await this.secrets.sealedWithOtherKeys(keyId, afterId, batchSize);
      for (const row of batch) {
        const seal = (sealed: SealedSecret) => this.cipher.seal(this.openOrExplain(row, sealed), associatedData(row.preferenceId));
        const written = await this.secrets.replaceIfUnchanged(row, seal(row), this.previousOf(row, seal));
        if (written) reencrypted++;
        else changedMeanwhile++;
      }
      if (batch.length < batchSize) break;
      afterId = batch[batch.length - 1].id;
    }
    return { keyId, alreadyCurrent: counts.get(keyId) ?? 0, reencrypted, changedMeanwhile };
  }

  /** A rotation's previous secret, re-sealed while its overlap runs; null (dropped) once it ended. */
  private previousOf(row: WebhookSigningSecret, seal: (sealed: SealedSecret) => SealedSecret): SealedSecret | null {
    const { previousKeyId: keyId, previousCiphertext: ciphertext, previousUntil } = row;
    if (keyId === null || ciphertext === null || previousUntil === null || previousUntil <= this.clock.now()) return null;
    return seal({ keyId, ciphertext });
  }

  private openOrExplain(row: WebhookSigningSecret, sealed: SealedSecret): string {
    try {
      return this.cipher.open(sealed, associatedData(row.preferenceId));
    } catch (error) {
      if (error instanceof UnknownEncryptionKeyError) throw new UnconfiguredKeysError(new Map([[sealed.keyId, 1]]));
      throw new Error(
        `The signing secret in row ${row.id} does not decrypt with key "${sealed.keyId}": wrong key for that id, or a damaged row`,
      );
    }
  }
}
