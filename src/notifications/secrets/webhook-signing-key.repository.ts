import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, In, Repository } from 'typeorm';
import { isUniqueViolation } from '../common/database/database-errors';
import { countByKeyId, sealedWithOtherKeys } from './sealed-rows';
import type { SealedSecret } from './secret-cipher';
import { WebhookSigningKey } from './webhook-signing-key.entity';

/** A new key pair as stored: its private key sealed, its public key in clear. */
export interface SealedKeyPair {
  readonly sealed: SealedSecret;
  readonly publicKey: string;
}

@Injectable()
export class WebhookSigningKeyRepository {
  constructor(@InjectRepository(WebhookSigningKey) private readonly keys: Repository<WebhookSigningKey>) {}

  /** This repository inside the transaction of `manager`. */
  in(manager: EntityManager): WebhookSigningKeyRepository {
    return new WebhookSigningKeyRepository(manager.withRepository(this.keys));
  }

  findByPreferenceId(preferenceId: number): Promise<WebhookSigningKey | null> {
    return this.keys.findOneBy({ preferenceId });
  }

  /** The public side of these preferences' keys (never the sealed private keys). */
  async publicKeys(
    preferenceIds: readonly number[],
  ): Promise<Pick<WebhookSigningKey, 'preferenceId' | 'publicKey' | 'previousPublicKey' | 'previousUntil'>[]> {
    if (preferenceIds.length === 0) return [];
    return this.keys.find({
      select: { preferenceId: true, publicKey: true, previousPublicKey: true, previousUntil: true },
      where: { preferenceId: In([...preferenceIds]) },
    });
  }

  /** Inserts the pair unless the preference has one already; false when another writer was first. */
  async insertIfAbsent(preferenceId: number, pair: SealedKeyPair): Promise<boolean> {
    try {
      await this.keys.insert({ preferenceId, keyId: pair.sealed.keyId, ciphertext: pair.sealed.ciphertext, publicKey: pair.publicKey });
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /**
   * Sets the preference's key pair, replacing any previous one; with `previousUntil`, the pair it replaces keeps
   * signing until then (a rotation's overlap). Answers whether it did (false when there was none, or no overlap).
   */
  async replace(preferenceId: number, pair: SealedKeyPair, previousUntil: number | null): Promise<boolean> {
    const current = await this.findByPreferenceId(preferenceId);
    if (!current) {
      if (await this.insertIfAbsent(preferenceId, pair)) return false;
      return this.replace(preferenceId, pair, previousUntil);
    }
    const keep = previousUntil !== null;
    await this.keys.update(
      { preferenceId },
      {
        keyId: pair.sealed.keyId,
        ciphertext: pair.sealed.ciphertext,
        publicKey: pair.publicKey,
        previousKeyId: keep ? current.keyId : null,
        previousCiphertext: keep ? current.ciphertext : null,
        previousPublicKey: keep ? current.publicKey : null,
        previousUntil: keep ? previousUntil : null,
      },
    );
    return keep;
  }

  /** How many rows each encryption key id sealed. */
  countByKeyId(): Promise<Map<string, number>> {
    return countByKeyId(this.keys);
  }

  /** Up to `limit` rows after `afterId` that another key than `keyId` sealed. */
  sealedWithOtherKeys(keyId: string, afterId: number, limit: number): Promise<WebhookSigningKey[]> {
    return sealedWithOtherKeys(this.keys, keyId, afterId, limit);
  }

  /** Stores the re-sealed private keys (null drops the previous pair) unless the row changed since it was read; false when it did. */
  async replaceIfUnchanged(
    read: Pick<WebhookSigningKey, 'id' | 'ciphertext' | 'previousCiphertext'>,
    sealed: SealedSecret,
    previous: SealedSecret | null,
  ): Promise<boolean> {
    const updated = await this.keys
      .createQueryBuilder()
      .update()
      .set({
        keyId: sealed.keyId,
        ciphertext: sealed.ciphertext,
        previousKeyId: previous?.keyId ?? null,
        previousCiphertext: previous?.ciphertext ?? null,
        ...(previous ? {} : { previousPublicKey: null, previousUntil: null }),
      })
      .where('id = :id AND ciphertext = :ciphertext', { id: read.id, ciphertext: read.ciphertext })
      .andWhere(read.previousCiphertext === null ? 'previous_ciphertext IS NULL' : 'previous_ciphertext = :previousCiphertext', {
        previousCiphertext: read.previousCiphertext,
      })
      .execute();
    return Boolean(updated.affected);
  }
}
