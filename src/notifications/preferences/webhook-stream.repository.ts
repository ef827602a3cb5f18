import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { type EntityManager, In, Repository } from 'typeorm';
import { isUniqueViolation } from '../common/database/database-errors';
import { WebhookStream } from './webhook-stream.entity';

/**
 * The users' streams (one per user and webhook URL): created as a URL is saved, and their ordered switch. The numbers
 * are the outbox's: it takes them in the publish transaction (`DeliveryOutboxRepository`).
 */
@Injectable()
export class WebhookStreamRepository {
  constructor(@InjectRepository(WebhookStream) private readonly streams: Repository<WebhookStream>) {}

  /** This repository inside the transaction of `manager`. */
  in(manager: EntityManager): WebhookStreamRepository {
    return new WebhookStreamRepository(manager.withRepository(this.streams));
  }

  /** The user's stream of `url` (as stored), created at its first use; a concurrent creation is read back. */
  async ensure(userId: number, url: string): Promise<WebhookStream> {
    const key = { userId, urlHash: streamUrlHash(url) };
    const existing = await this.streams.findOneBy(key);
    if (existing) return existing;
    try {
      await this.streams.insert(key);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
    }
    return this.streams.findOneByOrFail(key);
  }

  /** Turns ordered delivery on or off for the stream: claims from then on follow it. */
  async setOrdered(streamId: number, ordered: boolean): Promise<void> {
    await this.streams.update({ id: streamId }, { ordered });
  }

  /** Whether each of these streams is ordered. */
  async orderedOf(streamIds: readonly number[]): Promise<Map<number, boolean>> {
    if (streamIds.length === 0) return new Map();
    const rows = await this.streams.find({ select: { id: true, ordered: true }, where: { id: In([...new Set(streamIds)]) } });
    return new Map(rows.map((row) => [row.id, Boolean(row.ordered)]));
  }
}

/** A stream's key for a URL as stored (its SHA-256, hex), the one the migration that made streams computed too. */
export function streamUrlHash(url: string): string {
  return createHash('sha256').update(url).digest('hex');
}
