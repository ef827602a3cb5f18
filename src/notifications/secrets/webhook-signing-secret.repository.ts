import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { In, Repository } from 'typeorm';
import { isUniqueViolation } from '../common/database-errors';
import { findInChunks } from '../common/find-in-chunks';
import type { SealedSecret } from './secret-cipher';
import { WebhookSigningSecret } from './webhook-signing-secret.entity';

@Injectable()
export class WebhookSigningSecretRepository {
  constructor(@InjectRepository(WebhookSigningSecret) private readonly secrets: Repository<WebhookSigningSecret>) {}

  findByPreferenceId(preferenceId: number): Promise<WebhookSigningSecret | null> {
    return this.secrets.findOneBy({ preferenceId });
  }

  findByPreferenceIds(preferenceIds: readonly number[]): Promise<WebhookSigningSecret[]> {
    return findInChunks(preferenceIds, (chunk) => this.secrets.findBy({ preferenceId: In(chunk) }));
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
}
