import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, In, Repository } from 'typeorm';
import { type EventType, NotificationChannel } from '../catalog/event-catalog';
import { isUniqueViolation } from '../common/database-errors';
import { findInChunks } from '../common/find-in-chunks';
import { NotificationPreference } from './notification-preference.entity';

export interface PreferenceKey {
  readonly userId: number;
  readonly type: EventType;
  readonly channel: NotificationChannel;
}

export interface PreferenceChange {
  readonly enabled: boolean;
  /** undefined keeps the stored URL. */
  readonly webhookUrl?: string | null;
}

@Injectable()
export class NotificationPreferenceRepository {
  constructor(@InjectRepository(NotificationPreference) private readonly preferences: Repository<NotificationPreference>) {}

  listForUser(userId: number): Promise<NotificationPreference[]> {
    return this.preferences.find({ where: { userId }, order: { type: 'ASC', channel: 'ASC' } });
  }

  findOne(key: PreferenceKey): Promise<NotificationPreference | null> {
    return this.preferences.findOneBy({ userId: key.userId, type: key.type, channel: key.channel });
  }

  /** Enabled WEBHOOK preferences of these users for these types (callers filter the exact pairs). */
  enabledWebhooks(userIds: readonly number[], types: readonly EventType[]): Promise<NotificationPreference[]> {
    return findInChunks(userIds, (chunk) =>
      this.preferences.find({
        select: { id: true, userId: true, type: true, webhookUrl: true },
        where: { userId: In(chunk), type: In([...types]), channel: NotificationChannel.WEBHOOK, enabled: true },
      }),
    );
  }

  /** Creates or updates the preference; a concurrent first write of the same key turns into an update. */
  async upsert(key: PreferenceKey, change: PreferenceChange): Promise<NotificationPreference> {
    const existing = await this.findOne(key);
    if (existing) return this.update(existing, change);
    try {
      return await this.preferences.save(
        this.preferences.create({ ...key, enabled: change.enabled, webhookUrl: change.webhookUrl ?? null }),
      );
    } catch (error) {
      const winner = isUniqueViolation(error) ? await this.findOne(key) : null;
      if (!winner) throw error;
      return this.update(winner, change);
    }
  }

  /** Counts `count` more failed deliveries of an enabled preference; the new count, or null when it is not enabled. */
  async countFailures(key: PreferenceKey, count: number): Promise<number | null> {
    await this.preferences
      .createQueryBuilder()
      .update()
      .set({ consecutiveFailures: () => `consecutive_failures + ${Math.trunc(count)}`, updatedAt: keepUpdatedAt })
      .where('user_id = :userId AND type = :type AND channel = :channel AND enabled = :enabled', { ...key, enabled: true })
      .execute();
    const row = await this.preferences.findOne({ select: { id: true, enabled: true, consecutiveFailures: true }, where: { ...key } });
    return row?.enabled ? row.consecutiveFailures : null;
  }

  /** Forgets the failures in a row of these preferences (a delivery succeeded); writes only rows that had some. */
  async resetFailures(keys: readonly PreferenceKey[]): Promise<void> {
    for (let i = 0; i < keys.length; i += RESET_CHUNK) {
      const chunk = keys.slice(i, i + RESET_CHUNK);
      await this.preferences
        .createQueryBuilder()
        .update()
        .set({ consecutiveFailures: 0, updatedAt: keepUpdatedAt })
        .where('consecutive_failures > 0')
        .andWhere(
          new Brackets((anyOf) =>
            chunk.forEach(({ userId, type, channel }, j) =>
              anyOf.orWhere(`(user_id = :u${j} AND type = :t${j} AND channel = :c${j})`, { [`u${j}`]: userId, [`t${j}`]: type, [`c${j}`]: channel }),
            ),
          ),
        )
        .execute();
    }
  }

  /** Disables the preference with a reason if it is still enabled and still has `failures` in a row; true when it did. */
  async disableAfterFailures(key: PreferenceKey, failures: number, reason: string): Promise<boolean> {
    const result = await this.preferences
      .createQueryBuilder()
      .update()
      .set({ enabled: false, disabledReason: reason })
      .where('user_id = :userId AND type = :type AND channel = :channel AND enabled = :enabled AND consecutive_failures >= :failures', {
        ...key,
        enabled: true,
        failures,
      })
      .execute();
    return Boolean(result.affected);
  }

  private update(preference: NotificationPreference, change: PreferenceChange): Promise<NotificationPreference> {
    preference.enabled = change.enabled;
    if (change.webhookUrl !== undefined) preference.webhookUrl = change.webhookUrl;
    if (change.enabled) {
      preference.disabledReason = null;
      preference.consecutiveFailures = 0;
    }
    return this.preferences.save(preference);
  }
}

const RESET_CHUNK = 100;

// Failure bookkeeping is not a change the user made: `updatedAt` keeps its value.
const keepUpdatedAt = () => 'updated_at';
