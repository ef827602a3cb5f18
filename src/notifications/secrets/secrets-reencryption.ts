import { Inject, Injectable } from '@nestjs/common';
import { SecretCipher, UnknownEncryptionKeyError } from './secret-cipher';
import { associatedData } from './secrets.service';
import type { WebhookSigningSecret } from './webhook-signing-secret.entity';
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
  ) {}

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
        const secret = this.openOrExplain(row);
        const written = await this.secrets.replaceIfUnchanged(row, this.cipher.seal(secret, associatedData(row.preferenceId)));
        if (written) reencrypted++;
        else changedMeanwhile++;
      }
      if (batch.length < batchSize) break;
      afterId = batch[batch.length - 1].id;
    }
    return { keyId, alreadyCurrent: counts.get(keyId) ?? 0, reencrypted, changedMeanwhile };
  }

  private openOrExplain(row: WebhookSigningSecret): string {
    try {
      return this.cipher.open(row, associatedData(row.preferenceId));
    } catch (error) {
      if (error instanceof UnknownEncryptionKeyError) throw new UnconfiguredKeysError(new Map([[row.keyId, 1]]));
      throw new Error(
        `The signing secret in row ${row.id} does not decrypt with key "${row.keyId}": wrong key for that id, or a damaged row`,
      );
    }
  }
}
