import type { EventType } from '../../src/notifications/catalog/event-catalog';
import type { WebhookTarget } from '../../src/notifications/preferences/preferences.service';
import { webhookKey } from '../../src/notifications/preferences/webhook-key';
import type { InMemoryOutboxStore } from './in-memory-outbox-store';

/** A user's webhook of one event type: its URL, its stream, and whether WEBHOOK is on. */
export interface Webhook {
  readonly userId: number;
  readonly type: EventType;
  readonly url: string;
  enabled: boolean;
  readonly streamId: number;
}

/**
 * The users' webhook preferences, as the engines read them (PreferencesService): per user and event type a URL and
 * whether it is on; each user's streams (one per URL), ordered for the users who chose ordered delivery.
 */
export class UserWebhooks {
  /** Per `userId/type`. */
  readonly all = new Map<string, Webhook>();
  /** Users with ordered delivery on (every URL of theirs): `ordered-delivery` checks their streams. */
  readonly orderedUsers = new Set<number>();
  private readonly streamIds = new Map<string, number>();

  constructor(private readonly store: InMemoryOutboxStore) {}

  /** The user's webhook of `type` on `host`: ordered users post every type of a host to one URL (one stream across types). */
  add(userId: number, type: EventType, host: string, enabled: boolean): void {
    const url = this.orderedUsers.has(userId) ? `https://${host}/hooks` : `https://${host}/hooks/${type}`;
    const streamId = this.streamOf(userId, url);
    this.all.set(webhookKey(userId, type), { userId, type, url, enabled, streamId });
  }

  /** The user's stream of `url` (one per user and URL, made at its first use), ordered for the users who chose it. */
  private streamOf(userId: number, url: string): number {
    const key = `${userId} ${url}`;
    let id = this.streamIds.get(key);
    if (id === undefined) {
      id = this.store.addStream(userId, this.orderedUsers.has(userId));
      this.streamIds.set(key, id);
    }
    return id;
  }

  targetOf(webhook: { url: string; streamId: number; userId: number }): WebhookTarget {
    return { url: webhook.url, secret: 'simulation-secret', streamId: webhook.streamId, ordered: this.orderedUsers.has(webhook.userId) };
  }

  /** The targets of these users' types whose WEBHOOK is on. */
  targetsOf(pairs: readonly { userId: number; type: EventType }[]): Map<string, WebhookTarget> {
    const targets = new Map<string, WebhookTarget>();
    for (const { userId, type } of pairs) {
      const webhook = this.all.get(webhookKey(userId, type));
      if (webhook?.enabled) targets.set(webhookKey(userId, type), this.targetOf(webhook));
    }
    return targets;
  }

  /** Whether the stream is an ordered one: the world's own record, not the store's (a mutation may break the store). */
  isOrderedStream(streamId: number | null): boolean {
    return streamId !== null && this.orderedUsers.has(this.store.streams.get(streamId)?.userId ?? 0);
  }
}
