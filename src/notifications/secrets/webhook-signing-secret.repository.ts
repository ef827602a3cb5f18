import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, In, Repository } from 'typeorm';
import { isUniqueViolation } from '../common/database/database-errors';
import { countByKeyId, sealedWithOtherKeys } from './sealed-rows';
import type { SealedSecret } from './secret-cipher';
import { WebhookSigningSecret } from './webhook-signing-secret.entity';

@Injectable()
export class WebhookSigningSecretRepository {
  constructor(@InjectRepository(WebhookSigningSecret) private readonly secrets: Repository<WebhookSigningSecret>) {}

  /** This repository inside the transaction of `manager`. */
  in(manager: EntityManager): WebhookSigningSecretRepository {
    return new WebhookSigningSecretRepository(manager.withRepository(this.secrets));
  }

  findByPreferenceId(preferenceId: number): Promise<WebhookSigningSecret | null> {
    return this.secrets.findOneBy({ preferenceId });
  }

  async preferenceIdsWithSecret(preferenceIds: readonly number[]): Promise<Set<number>> {
    if (preferenceIds.length === 0) return new Set();
    const rows = await this.secrets.find({ select: { preferenceId: true }, where: { preferenceId: In([...preferenceIds]) } });
    return new Set(rows.map((row) => row.preferenceId));
  }

  /** Inserts the secret unless the preference has one already; false when another writer was first. */
  async insertIfAbsent(preferenceId: number, sealed: SealedSecret): Promise<boolean> {
    try {
      await this.secrets.insert({ preferenceId, keyId: sealed.keyId, ciphertext: sealed.ciphertext });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /**
   * Sets the preference's secret, replacing any previous one (a concurrent first insert turns into an update). With
   * `previousUntil`, the secret it replaces keeps signing `webhook-signature` until then (a rotation's overlap);
   * answers whether it did (false when there was none).
   */
  async replace(preferenceId: number, sealed: SealedSecret, previousUntil: number | null = null): Promise<boolean> {
    const current = previousUntil === null ? null : await this.findByPreferenceId(preferenceId);
    const change = {
      keyId: sealed.keyId,
      ciphertext: sealed.ciphertext,
      previousKeyId: current?.keyId ?? null,
      previousCiphertext: current?.ciphertext ?? null,
      previousUntil: current ? previousUntil : null,
    };
    const updated = await this.secrets.update({ preferenceId }, change);
    if (updated.affected) return change.previousCiphertext !== null;
    if (await this.insertIfAbsent(preferenceId, sealed)) return false;
    await this.secrets.update({ preferenceId }, { ...change, previousKeyId: null, previousCiphertext: null, previousUntil: null });
    return false;
  }

  /** How many rows each encryption key id sealed. */
  countByKeyId(): Promise<Map<string, number>> {
    return countByKeyId(this.secrets);
  }

  /** Up to `limit` rows after `afterId` that another key than `keyId` sealed. */
  sealedWithOtherKeys(keyId: string, afterId: number, limit: number): Promise<WebhookSigningSecret[]> {
    return sealedWithOtherKeys(this.secrets, keyId, afterId, limit);
  }

  /**
   * Stores the re-sealed secret (and its rotation's previous one, or none: null drops it) unless the row changed since
   * it was read; false when it did.
   */
  async replaceIfUnchanged(
    read: Pick<WebhookSigningSecret, 'id' | 'ciphertext' | 'previousCiphertext'>,
    sealed: SealedSecret,
    previous: SealedSecret | null,
  ): Promise<boolean> {
    const updated = await this.secrets
      .createQueryBuilder()
      .update()
      .set({
        keyId: sealed.keyId,
        ciphertext: sealed.ciphertext,
        previousKeyId: previous?.keyId ?? null,
        previousCiphertext: previous?.ciphertext ?? null,
        ...(previous ? {} : { previousUntil: null }),
      })
      .where('id = :id AND ciphertext = :ciphertext', { id: read.id, ciphertext: read.ciphertext })
      .andWhere(read.previousCiphertext === null ? 'previous_ciphertext IS NULL' : 'previous_ciphertext = :previousCiphertext', {
        previousCiphertext: read.previousCiphertext,
      })
      .execute();
    return Boolean(updated.affected);
  }
}
