import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, type EntityManager, Repository } from 'typeorm';
import { type EventType, NotificationChannel } from '../catalog/event-catalog';
import { isUniqueViolation } from '../common/database/database-errors';
import { findInChunks } from './find-in-chunks';
import { webhookKey } from './webhook-key';
import { NotificationPreference } from './notification-preference.entity';
import type { StoredSigningKey } from '../secrets/webhook-signing-key.entity';
import type { StoredSigningSecret } from '../secrets/webhook-signing-secret.entity';

export interface PreferenceKey {
  readonly userId: number;
  readonly type: EventType;
  readonly channel: NotificationChannel;
}

/** A webhook preference's key, and the URL its failures were counted for: a row whose URL has changed since is left alone. */
export interface WebhookFailureKey extends PreferenceKey {
  readonly webhookUrl?: string;
}

export interface PreferenceChange {
  readonly enabled: boolean;
  /** undefined keeps the stored URL. */
  readonly webhookUrl?: string | null;
  /** undefined keeps the stored schemes (as stored: `hmac`, `ed25519`, `hmac,ed25519`). */
  readonly signatureSchemes?: string;
  /** The stream of the URL (set with it); undefined keeps the stored one. */
  readonly streamId?: number;
}

/** An enabled webhook preference, with its signing secret as stored (sealed), or null when it has none. */
export interface EnabledWebhook {
  readonly id: number;
  readonly userId: number;
  readonly type: EventType;
  readonly webhookUrl: string | null;
  readonly secret: StoredSigningSecret | null;
  /** As stored: `hmac`, `ed25519` or `hmac,ed25519`. */
  readonly signatureSchemes: string;
  /** Its Ed25519 key pair as stored (sealed), or null when it has none. */
  readonly signingKey: StoredSigningKey | null;
  /** The stream of its URL (null for none yet), and whether that stream is ordered. */
  readonly streamId: number | null;
  readonly ordered: boolean;
}

interface EnabledWebhookRow {
  id: number | string;
  user_id: number | string;
  type: EventType;
  webhook_url: string | null;
  key_id: string | null;
  ciphertext: string | null;
  previous_key_id: string | null;
  previous_ciphertext: string | null;
  previous_until: number | string | null;
  signature_schemes: string;
  k_key_id: string | null;
  k_ciphertext: string | null;
  k_previous_key_id: string | null;
  k_previous_ciphertext: string | null;
  k_previous_until: number | string | null;
  stream_id: number | string | null;
  ordered: number | boolean | string | null;
}

@Injectable()
export class NotificationPreferenceRepository {
  constructor(@InjectRepository(NotificationPreference) private readonly preferences: Repository<NotificationPreference>) {}

  /** This repository inside the transaction of `manager`. */
  in(manager: EntityManager): NotificationPreferenceRepository {
    return new NotificationPreferenceRepository(manager.withRepository(this.preferences));
  }

  listForUser(userId: number): Promise<NotificationPreference[]> {
    return this.preferences.find({ where: { userId }, order: { type: 'ASC', channel: 'ASC' } });
  }

  findOne(key: PreferenceKey): Promise<NotificationPreference | null> {
    return this.preferences.findOneBy({ userId: key.userId, type: key.type, channel: key.channel });
  }

  /**
   * Enabled WEBHOOK preferences of these users for these types (callers filter the exact pairs), each with its sealed
   * signing secret and key pair: one statement (joins), as every publish and every claim of retries reads them.
   */
  enabledWebhooks(userIds: readonly number[], types: readonly EventType[]): Promise<EnabledWebhook[]> {
    if (types.length === 0) return Promise.resolve([]);
    return findInChunks(userIds, async (chunk) => {
      const rows = await this.preferences.manager.query<EnabledWebhookRow[]>(
        'SELECT p.id, p.user_id, p.type, p.webhook_url, p.signature_schemes, s.key_id, s.ciphertext, s.previous_key_id, ' +
          's.previous_ciphertext, s.previous_until, k.key_id AS k_key_id, k.ciphertext AS k_ciphertext, ' +
          'k.previous_key_id AS k_previous_key_id, k.previous_ciphertext AS k_previous_ciphertext, k.previous_until AS k_previous_until, ' +
          'p.stream_id, st.ordered ' +
          'FROM notification_preferences p LEFT JOIN webhook_signing_secrets s ON s.preference_id = p.id ' +
          'LEFT JOIN webhook_signing_keys k ON k.preference_id = p.id LEFT JOIN webhook_streams st ON st.id = p.stream_id ' +
          `WHERE p.user_id IN (${placeholders(chunk)}) AND p.type IN (${placeholders(types)}) AND p.channel = ? AND p.enabled = ?`,
        [...chunk, ...types, NotificationChannel.WEBHOOK, true],
      );
      return rows.map(enabledWebhookOf);
    });
  }

  /** The URL of each of these (user, type) pairs that has a WEBHOOK preference, by {@link webhookKey}. */
  async webhookUrls(pairs: readonly { userId: number; type: EventType }[]): Promise<Map<string, string | null>> {
    const urls = new Map<string, string | null>();
    for (const chunk of chunks(pairs)) {
      const rows = await this.preferences.manager.query<{ user_id: number | string; type: EventType; webhook_url: string | null }[]>(
        `SELECT user_id, type, webhook_url FROM notification_preferences WHERE channel = ? AND (user_id, type) IN (${chunk.map(() => '(?, ?)').join(', ')})`,
        [NotificationChannel.WEBHOOK, ...chunk.flatMap(({ userId, type }) => [userId, type])],
      );
      for (const row of rows) urls.set(webhookKey(Number(row.user_id), row.type), row.webhook_url);
    }
    return urls;
  }

  /** Creates or updates the preference; a concurrent first write of the same key turns into an update. */
  async upsert(key: PreferenceKey, change: PreferenceChange): Promise<NotificationPreference> {
    const existing = await this.findOne(key);
    if (existing) return this.update(existing, change);
    try {
      return await this.preferences.save(
        this.preferences.create({
          ...key,
          enabled: change.enabled,
          webhookUrl: change.webhookUrl ?? null,
          streamId: change.streamId ?? null,
          ...(change.signatureSchemes === undefined ? {} : { signatureSchemes: change.signatureSchemes }),
        }),
      );
    } catch (error) {
      const winner = isUniqueViolation(error) ? await this.findOne(key) : null;
      if (!winner) throw error;
      return this.update(winner, change);
    }
  }

  /**
   * The preference, created disabled with `webhookUrl` when it does not exist yet (a concurrent creation of the same
   * key is read back instead). For a transaction that enables it once what it needs, its signing secret, is written.
   */
  async findOrCreateDisabled(key: PreferenceKey, webhookUrl: string | null): Promise<NotificationPreference> {
    const existing = await this.findOne(key);
    if (existing) return existing;
    try {
      await this.preferences.insert({ ...key, enabled: false, webhookUrl });
    } catch (error) {
      // The other writer has committed (MySQL/MariaDB waits for it) or shares our SQLite connection: its row is visible.
      if (!isUniqueViolation(error)) throw error;
    }
    const created = await this.findOne(key);
    if (!created) throw new Error(`Preference ${key.userId}/${key.type}/${key.channel} was neither found nor created`);
    return created;
  }

  /**
   * Adds failed deliveries to enabled preferences (`count` each), one UPDATE per distinct count and chunk of
   * keys, then reads the new counts back in one SELECT per chunk. Answers the preferences still enabled.
   */
  async countFailures(
    failures: readonly { key: WebhookFailureKey; count: number }[],
  ): Promise<{ userId: number; type: EventType; consecutiveFailures: number }[]> {
    for (const count of new Set(failures.map((failure) => failure.count))) {
      const keys = failures.filter((failure) => failure.count === count).map((failure) => failure.key);
      for (const chunk of chunks(keys)) {
        await this.preferences
          .createQueryBuilder()
          .update()
          .set({ consecutiveFailures: () => `consecutive_failures + ${Math.trunc(count)}`, updatedAt: keepUpdatedAt })
          .where('enabled = :enabled', { enabled: true })
          .andWhere(anyOf(chunk))
          .execute();
      }
    }
    const counted = [];
    for (const chunk of chunks(failures.map((failure) => failure.key))) {
      counted.push(
        ...(await this.preferences
          .createQueryBuilder('p')
          .select(['p.userId', 'p.type', 'p.consecutiveFailures'])
          .where('p.enabled = :enabled', { enabled: true })
          .andWhere(anyOf(chunk))
          .getMany()),
      );
    }
    return counted;
  }

  /** Forgets the failures in a row of these preferences (a delivery succeeded); writes only rows that had some. */
  async resetFailures(keys: readonly WebhookFailureKey[]): Promise<void> {
    for (const chunk of chunks(keys)) {
      await this.preferences
        .createQueryBuilder()
        .update()
        .set({ consecutiveFailures: 0, updatedAt: keepUpdatedAt })
        .where('consecutive_failures > 0')
        .andWhere(anyOf(chunk))
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

  /** Applies the change to a preference read before; enabling clears the auto-disable reason and failure count. */
  update(preference: NotificationPreference, change: PreferenceChange): Promise<NotificationPreference> {
    preference.enabled = change.enabled;
    if (change.webhookUrl !== undefined) preference.webhookUrl = change.webhookUrl;
    if (change.signatureSchemes !== undefined) preference.signatureSchemes = change.signatureSchemes;
    if (change.streamId !== undefined) preference.streamId = change.streamId;
    if (change.enabled) {
      preference.disabledReason = null;
      preference.consecutiveFailures = 0;
    }
    return this.preferences.save(preference);
  }
}

const KEYS_PER_STATEMENT = 100;

function chunks<T>(items: readonly T[]): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += KEYS_PER_STATEMENT) result.push(items.slice(i, i + KEYS_PER_STATEMENT));
  return result;
}

/** `(user_id = … AND type = … AND channel = …) OR …`, one term per key. */
function anyOf(keys: readonly WebhookFailureKey[]): Brackets {
  return new Brackets((where) =>
    keys.forEach(({ userId, type, channel, webhookUrl }, j) =>
      where.orWhere(
        `(user_id = :u${j} AND type = :t${j} AND channel = :c${j}${webhookUrl === undefined ? '' : ` AND webhook_url = :w${j}`})`,
        {
          [`u${j}`]: userId,
          [`t${j}`]: type,
          [`c${j}`]: channel,
          ...(webhookUrl === undefined ? {} : { [`w${j}`]: webhookUrl }),
        },
      ),
    ),
  );
}

// Failure bookkeeping is not a change the user made: `updatedAt` keeps its value.
const keepUpdatedAt = () => 'updated_at';

const placeholders = (values: readonly unknown[]) => values.map(() => '?').join(', ');

function enabledWebhookOf(row: EnabledWebhookRow): EnabledWebhook {
  const id = Number(row.id);
  const secret: StoredSigningSecret | null =
    row.key_id === null || row.ciphertext === null
      ? null
      : {
          preferenceId: id,
          keyId: row.key_id,
          ciphertext: row.ciphertext,
          previousKeyId: row.previous_key_id,
          previousCiphertext: row.previous_ciphertext,
          previousUntil: row.previous_until === null ? null : Number(row.previous_until),
        };
  const signingKey: StoredSigningKey | null =
    row.k_key_id === null || row.k_ciphertext === null
      ? null
      : {
          preferenceId: id,
          keyId: row.k_key_id,
          ciphertext: row.k_ciphertext,
          previousKeyId: row.k_previous_key_id,
          previousCiphertext: row.k_previous_ciphertext,
          previousUntil: row.k_previous_until === null ? null : Number(row.k_previous_until),
        };
  const signatureSchemes = row.signature_schemes;
  const streamId = row.stream_id === null ? null : Number(row.stream_id);
  const ordered = streamId !== null && Boolean(Number(row.ordered));
  return {
    id,
    userId: Number(row.user_id),
    type: row.type,
    webhookUrl: row.webhook_url,
    secret,
    signatureSchemes,
    signingKey,
    streamId,
    ordered,
  };
}
