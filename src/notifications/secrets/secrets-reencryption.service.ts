import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { EncryptionKey } from '../notifications-options.interface';
import { Clock, SystemClock } from '../clock/clock';
import { type SealedSecret, SecretCipher, UnknownEncryptionKeyError } from './secret-cipher';
import { associatedData, keyAssociatedData } from './secrets.service';
import { WebhookSigningKey } from './webhook-signing-key.entity';
import { WebhookSigningKeyRepository } from './webhook-signing-key.repository';
import { WebhookSigningSecret } from './webhook-signing-secret.entity';
import { WebhookSigningSecretRepository } from './webhook-signing-secret.repository';

/** A sealed row of either table: a signing secret or an Ed25519 key pair, each with a rotation's previous one. */
type SealedRow = Pick<
  WebhookSigningSecret,
  'id' | 'preferenceId' | 'keyId' | 'ciphertext' | 'previousKeyId' | 'previousCiphertext' | 'previousUntil'
>;

/** What a run needs of one table of sealed rows. */
interface SealedTable {
  readonly what: string;
  readonly associatedData: (preferenceId: number) => string;
  countByKeyId(): Promise<Map<string, number>>;
  sealedWithOtherKeys(keyId: string, afterId: number, limit: number): Promise<SealedRow[]>;
  replaceIfUnchanged(read: SealedRow, sealed: SealedSecret, previous: SealedSecret | null): Promise<boolean>;
}

/** What one re-encryption run did (secrets counts signing secrets and Ed25519 private keys alike). */
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

function sealedTable(
  what: string,
  associatedData: (preferenceId: number) => string,
  repository: Omit<SealedTable, 'what' | 'associatedData'>,
): SealedTable {
  return {
    what,
    associatedData,
    countByKeyId: () => repository.countByKeyId(),
    sealedWithOtherKeys: (keyId, afterId, limit) => repository.sealedWithOtherKeys(keyId, afterId, limit),
    replaceIfUnchanged: (read, sealed, previous) => repository.replaceIfUnchanged(read, sealed, previous),
  };
}

/**
 * Re-seals every signing secret and Ed25519 private key with the newest encryption key, in batches, so older keys can be
 * retired. Idempotent, and safe while the service runs: a row is only written if it is still what was
 * read, so a secret rotated meanwhile is never overwritten with its old value.
 *
 * @publicApi
 */
@Injectable()
export class SecretsReencryption {
  private readonly tables: readonly SealedTable[];

  constructor(
    private readonly secrets: WebhookSigningSecretRepository,
    private readonly keys: WebhookSigningKeyRepository,
    @Inject(SecretCipher) private readonly cipher: SecretCipher,
    private readonly clock: Clock,
  ) {
    this.tables = [sealedTable('signing secret', associatedData, secrets), sealedTable('signing key', keyAssociatedData, keys)];
  }

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
    const keys = new WebhookSigningKeyRepository(dataSource.getRepository(WebhookSigningKey));
    return new SecretsReencryption(secrets, keys, new SecretCipher(encryptionKeys), clock);
  }

  /** How many signing secrets and Ed25519 private keys each encryption key id seals now. */
  async secretsByKeyId(): Promise<ReadonlyMap<string, number>> {
    const counts = new Map<string, number>();
    for (const table of this.tables)
      for (const [keyId, rows] of await table.countByKeyId()) counts.set(keyId, (counts.get(keyId) ?? 0) + rows);
    return counts;
  }

  async run(batchSize = REENCRYPTION_BATCH_SIZE): Promise<ReencryptionReport> {
    const keyId = this.cipher.primaryKeyId;
    const counts = await this.secretsByKeyId();
    const unconfigured = new Map([...counts].filter(([id]) => !this.cipher.hasKey(id)));
    if (unconfigured.size > 0) throw new UnconfiguredKeysError(unconfigured);

    let reencrypted = 0;
    let changedMeanwhile = 0;
    for (const table of this.tables) {
      let afterId = 0;
      for (;;) {
        const batch = await table.sealedWithOtherKeys(keyId, afterId, batchSize);
        for (const row of batch) {
          const seal = (sealed: SealedSecret) =>
            this.cipher.seal(this.openOrExplain(table, row, sealed), table.associatedData(row.preferenceId));
          const written = await table.replaceIfUnchanged(row, seal(row), this.previousOf(row, seal));
          if (written) reencrypted++;
          else changedMeanwhile++;
        }
        if (batch.length < batchSize) break;
        afterId = batch[batch.length - 1].id;
      }
    }
    return { keyId, alreadyCurrent: counts.get(keyId) ?? 0, reencrypted, changedMeanwhile };
  }

  /** A rotation's previous secret, re-sealed while its overlap runs; null (dropped) once it ended. */
  private previousOf(row: SealedRow, seal: (sealed: SealedSecret) => SealedSecret): SealedSecret | null {
    const { previousKeyId: keyId, previousCiphertext: ciphertext, previousUntil } = row;
    if (keyId === null || ciphertext === null || previousUntil === null || previousUntil <= this.clock.now()) return null;
    return seal({ keyId, ciphertext });
  }

  private openOrExplain(table: SealedTable, row: SealedRow, sealed: SealedSecret): string {
    try {
      return this.cipher.open(sealed, table.associatedData(row.preferenceId));
    } catch (error) {
      if (error instanceof UnknownEncryptionKeyError) throw new UnconfiguredKeysError(new Map([[sealed.keyId, 1]]));
      throw new Error(
        `The ${table.what} in row ${row.id} does not decrypt with key "${sealed.keyId}": wrong key for that id, or a damaged row`,
      );
    }
  }
}
