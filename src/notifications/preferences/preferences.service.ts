import { Injectable, NotFoundException } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Subject } from 'rxjs';
import { DataSource, type EntityManager } from 'typeorm';
import { EVENT_CATALOG, type EventType, NotificationChannel, eventTypeDefinition } from '../catalog/event-catalog';
import { InvalidFieldsException } from '../common/api/api-errors';
import { shortTransaction } from '../common/database/short-transaction';
import type { KeyObject } from 'node:crypto';
import { type PublicSigningKeys, SecretsService, type SigningSecrets } from '../secrets/secrets.service';
import { SignatureScheme, type WebhookSigning, schemesOf, storedSchemes } from '../secrets/signature-scheme';
import { UnsafeWebhookUrlError, WebhookUrlPolicy } from '../url-policy/webhook-url-policy';
import type { FinishedRun } from './finished-runs';
import { webhookKey } from './webhook-key';
import type { EffectivePreferenceDto, PreferenceDto, RotatedSecretResponseDto, UpsertPreferenceResponseDto } from './dto/preference.dto';
import { PreferenceSource, WebhookDisabledReasonCode } from './dto/preference.dto';
import type { UpsertPreferenceDto } from './dto/upsert-preference.dto';
import type { NotificationPreference } from './notification-preference.entity';
import { NotificationPreferenceRepository, type PreferenceKey } from './notification-preference.repository';
import { WebhookStreamRepository } from './webhook-stream.repository';

const { WEBHOOK } = NotificationChannel;
const HOUR_MS = 3_600_000;

export interface WebhookTarget {
  readonly url: string;
  /** What signs: the signing secret alone (HMAC), or the webhook's schemes and keys. */
  readonly secret: string | WebhookSigning | null;
  /** During a secret rotation's overlap, the secret before it: it signs `webhook-signature` too. */
  readonly previousSecret?: string | null;
  /**
   * Why the webhook cannot be signed (no secret, or it does not decrypt): attempts fail without a request until it
   * is fixed, never go out unsigned. Set whenever `secret` is null.
   */
  readonly unusableSecret?: string;
  /** The user's stream of this URL: numbers its deliveries (`X-Service-Sequence`); absent for a test send. */
  readonly streamId?: number | null;
  /** Ordered delivery is on for the stream: its deliveries go one at a time, in order. */
  readonly ordered?: boolean;
}

/** When a run of failed deliveries disables a webhook. */
export interface AutoDisablePolicy {
  /** Failed deliveries in a row that disable it (≥ 1). */
  readonly disableAfter: number;
  /** Now, in epoch ms, for the reason text. */
  readonly now: number;
}

export interface DisabledWebhook {
  readonly userId: number;
  readonly type: EventType;
  readonly failures: number;
}

/** {@link WebhookTarget.unusableSecret} of an enabled webhook that has no signing secret. */
export const NO_SIGNING_SECRET = 'no signing secret (rotating the secret creates one)';

/** A webhook whose URL a user changed; announced once the change is committed. */
export interface WebhookUrlChanged {
  readonly userId: number;
  readonly type: EventType;
}

/** {@link WebhookTarget.unusableSecret} of an Ed25519-signed webhook that has no key pair. */
export const NO_SIGNING_KEY = 'no Ed25519 signing key (rotating the signing key creates one)';

@Injectable()
export class PreferencesService {
  /** Each change of a webhook's URL to another one, after its commit: what was known about the old URL's health is moot. */
  readonly webhookUrlChanged = new Subject<WebhookUrlChanged>();

  constructor(
    private readonly preferences: NotificationPreferenceRepository,
    private readonly secrets: SecretsService,
    private readonly urlPolicy: WebhookUrlPolicy,
    private readonly streams: WebhookStreamRepository,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /**
   * Saves one preference. The first enable of WEBHOOK for a type generates its signing secret and
   * returns it, once; later upserts (and disabling) keep the secret and never return it.
   */
  async upsert(userId: number, input: UpsertPreferenceDto): Promise<UpsertPreferenceResponseDto> {
    const { type, channel, enabled } = input;
    if (!eventTypeDefinition(type).channels.includes(channel)) {
      throw InvalidFieldsException.of('channel', `${channel} is not offered for ${type}, which the service manages itself`);
    }
    const webhookUrl = await this.acceptedWebhookUrl(userId, input);
    const signatureSchemes = acceptedSchemes(input);
    const ordered = acceptedOrdered(input);
    const key = { userId, type, channel };
    if (channel === WEBHOOK && enabled) {
      const { response, previousUrl } = await this.enableWebhook(key, webhookUrl!, signatureSchemes, ordered);
      this.announceUrlChange(key, previousUrl, webhookUrl);
      return response;
    }
    if (channel !== WEBHOOK) return toDto(await this.preferences.upsert(key, { enabled, webhookUrl }), false);
    const previousUrl = webhookUrl != null ? ((await this.preferences.findOne(key))?.webhookUrl ?? null) : null;
    const preference = await shortTransaction(this.dataSource, async (manager) => {
      const streamId = webhookUrl != null ? (await this.streams.in(manager).ensure(userId, webhookUrl)).id : undefined;
      const saved = await this.preferences.in(manager).upsert(key, { enabled, webhookUrl, signatureSchemes, streamId });
      if (schemesOf(saved.signatureSchemes).includes(SignatureScheme.ED25519)) await this.secrets.ensureSigningKey(saved.id, manager);
      if (ordered !== undefined) {
        if (saved.streamId === null) throw InvalidFieldsException.of('orderedDelivery', 'needs a webhookUrl: send one, or save one first');
        await this.streams.in(manager).setOrdered(saved.streamId, ordered);
      }
      return saved;
    });
    this.announceUrlChange(key, previousUrl, webhookUrl);
    const withSecret = await this.secrets.preferenceIdsWithSecret([preference.id]);
    return toDto(preference, withSecret.has(preference.id), await this.publicKeyOf(preference.id), await this.isOrdered(preference));
  }

  /**
   * Enables a webhook and gives it its signing secret in one transaction: deliveries looked up in between would go
   * out unsigned, so the preference is never visible enabled without its secret. Inside, the webhook is enabled
   * only after its secret is written, because on SQLite other requests share the connection and so see the
   * transaction's writes. Of concurrent first enables, the one that wrote the secret returns it.
   */
  private async enableWebhook(
    key: PreferenceKey,
    webhookUrl: string,
    signatureSchemes?: string,
    ordered?: boolean,
  ): Promise<{ response: UpsertPreferenceResponseDto; previousUrl: string | null }> {
    const { preference, revealed, previousUrl } = await shortTransaction(this.dataSource, async (manager) => {
      const preferences = this.preferences.in(manager);
      const existing = await preferences.findOrCreateDisabled(key, webhookUrl);
      const previousUrl = existing.webhookUrl; // before the update, which writes the new one into `existing`
      const secret = await this.secrets.ensureSecret(existing.id, manager);
      // Like the secret, the key pair exists before the webhook is enabled with a scheme that needs it.
      if (schemesOf(signatureSchemes ?? existing.signatureSchemes).includes(SignatureScheme.ED25519))
        await this.secrets.ensureSigningKey(existing.id, manager);
      const stream = await this.streams.in(manager).ensure(key.userId, webhookUrl);
      if (ordered !== undefined) await this.streams.in(manager).setOrdered(stream.id, ordered);
      const updated = await preferences.update(existing, { enabled: true, webhookUrl, signatureSchemes, streamId: stream.id });
      return { preference: updated, revealed: secret, previousUrl };
    });
    const dto = toDto(preference, true, await this.publicKeyOf(preference.id), await this.isOrdered(preference));
    return { response: revealed ? { ...dto, webhookSecret: revealed } : dto, previousUrl };
  }

  /**
   * Replaces the Ed25519 key pair of the type's configured webhook (enabled or not), or gives it its first, and answers
   * the preference with its new public key. The next attempt, pending retries included, is signed with the new private
   * key; with an overlap, the old one also signs (`v1a` twice) for that many hours.
   */
  async rotateSigningKey(userId: number, type: EventType, overlapHours = 0): Promise<PreferenceDto> {
    const preference = await this.preferences.findOne({ userId, type, channel: WEBHOOK });
    if (!preference?.webhookUrl) throw new NotFoundException(`No webhook is configured for ${type}`);
    await this.secrets.rotateSigningKey(preference.id, overlapHours * HOUR_MS);
    const withSecret = await this.secrets.preferenceIdsWithSecret([preference.id]);
    return toDto(preference, withSecret.has(preference.id), await this.publicKeyOf(preference.id), await this.isOrdered(preference));
  }

  private announceUrlChange(key: PreferenceKey, previousUrl: string | null, webhookUrl: string | null | undefined): void {
    if (previousUrl !== null && webhookUrl != null && previousUrl !== webhookUrl) {
      this.webhookUrlChanged.next({ userId: key.userId, type: key.type });
    }
  }

  /**
   * Replaces the signing secret of the type's configured webhook (enabled or not) and returns the new one, once. The
   * next attempt, pending retries included, uses the new one; with an overlap, the old one also signs
   * `webhook-signature` for that many hours.
   */
  async rotateSecret(userId: number, type: EventType, overlapHours = 0): Promise<RotatedSecretResponseDto> {
    const preference = await this.preferences.findOne({ userId, type, channel: WEBHOOK });
    if (!preference?.webhookUrl) throw new NotFoundException(`No webhook is configured for ${type}`);
    const rotated = await this.secrets.rotateSecret(preference.id, overlapHours * HOUR_MS);
    const previousSecretValidUntil = rotated.previousUntil === null ? null : new Date(rotated.previousUntil).toISOString();
    const dto = toDto(preference, true, await this.publicKeyOf(preference.id), await this.isOrdered(preference));
    return { ...dto, webhookSecret: rotated.secret, previousSecretValidUntil };
  }

  /**
   * Auto-disable bookkeeping for deliveries that ended, folded per webhook: a DELIVERED one resets its
   * failures in a row (one write for the whole batch), FAILED ones after it are added and, at
   * `policy.disableAfter`, disable the type's webhook with a reason. Answers the webhooks it disabled.
   */
  async recordFinishedRuns(runs: readonly FinishedRun[], policy: AutoDisablePolicy): Promise<DisabledWebhook[]> {
    // Keyed by the URL too: a delivery whose last attempt went to a URL the user has replaced since counts for neither.
    const key = ({ userId, type, webhookUrl }: Pick<FinishedRun, 'userId' | 'type' | 'webhookUrl'>) => ({
      userId,
      type,
      channel: WEBHOOK,
      webhookUrl,
    });
    await this.preferences.resetFailures(runs.filter((run) => run.reset).map(key));
    const failing = runs.filter(({ failuresAfter }) => failuresAfter > 0).map((run) => ({ key: key(run), count: run.failuresAfter }));
    const counted = await this.preferences.countFailures(failing);
    const disabled: DisabledWebhook[] = [];
    for (const { userId, type, consecutiveFailures: failures } of counted.filter((row) => row.consecutiveFailures >= policy.disableAfter)) {
      const reason = `disabled after ${failures} consecutive failed deliveries on ${new Date(policy.now).toISOString()}`;
      if (await this.preferences.disableAfterFailures(key({ userId, type }), policy.disableAfter, reason))
        disabled.push({ userId, type, failures });
    }
    return disabled;
  }

  /** The user's explicit preferences. */
  async list(userId: number): Promise<PreferenceDto[]> {
    const preferences = await this.preferences.listForUser(userId);
    const withSecret = await this.secretsOf(preferences);
    const keys = await this.publicKeysOf(preferences);
    const ordered = await this.orderedOf(preferences);
    return preferences.map((preference) =>
      toDto(preference, withSecret.has(preference.id), keys.get(preference.id), ordered.get(preference.streamId ?? 0)),
    );
  }

  /** Defaults merged with the user's explicit preferences: one row per event type and allowed channel. */
  async effective(userId: number): Promise<EffectivePreferenceDto[]> {
    const preferences = await this.preferences.listForUser(userId);
    const withSecret = await this.secretsOf(preferences);
    const keys = await this.publicKeysOf(preferences);
    const ordered = await this.orderedOf(preferences);
    const explicit = new Map(preferences.map((p) => [`${p.type}/${p.channel}`, p]));
    return EVENT_CATALOG.flatMap(({ type, group, channels, defaultChannels }) =>
      channels.map((channel): EffectivePreferenceDto => {
        const preference = explicit.get(`${type}/${channel}`);
        const row: EffectivePreferenceDto = {
          type,
          group,
          channel,
          enabled: preference ? preference.enabled : defaultChannels.includes(channel),
          source: preference ? PreferenceSource.USER : PreferenceSource.DEFAULT,
        };
        if (channel !== WEBHOOK) return row;
        const webhook = {
          ...row,
          webhookUrl: preference?.webhookUrl ?? null,
          hasWebhookSecret: !!preference && withSecret.has(preference.id),
          orderedDelivery: ordered.get(preference?.streamId ?? 0) ?? false,
          ...signingOf(preference, preference && keys.get(preference.id)),
        };
        return withDisabledReason(webhook, preference);
      }),
    );
  }

  /**
   * Where and how to deliver now, for many (user, type) pairs at once: the enabled webhooks' current
   * URL and signing secret, keyed by {@link webhookKey}. Pairs with WEBHOOK off are absent. A webhook whose
   * secret is missing or does not decrypt has `secret: null` and says why in `unusableSecret`. Read through `manager`
   * when given: inside a host's transaction, a second pooled connection would wait for one the host holds.
   */
  async webhookTargets(
    pairs: readonly { userId: number; type: EventType }[],
    manager?: EntityManager,
  ): Promise<Map<string, WebhookTarget>> {
    if (pairs.length === 0) return new Map();
    const wanted = new Set(pairs.map((p) => webhookKey(p.userId, p.type)));
    const userIds = [...new Set(pairs.map((p) => p.userId))];
    const types = [...new Set(pairs.map((p) => p.type))];
    const preferences = manager ? this.preferences.in(manager) : this.preferences;
    const enabled = (await preferences.enabledWebhooks(userIds, types)).filter(
      (p) => p.webhookUrl && wanted.has(webhookKey(p.userId, p.type)),
    );
    const secrets = this.secrets.openForSigning(enabled.flatMap((p) => (p.secret ? [p.secret] : [])));
    const ed25519 = enabled.filter((p) => p.signingKey && schemesOf(p.signatureSchemes).includes(SignatureScheme.ED25519));
    const keys = this.secrets.openSigningKeys(ed25519.map((p) => p.signingKey!));
    return new Map(
      enabled.map((p) => [
        webhookKey(p.userId, p.type),
        {
          ...targetOf(p.webhookUrl!, schemesOf(p.signatureSchemes), secrets.get(p.id), keys.get(p.id)),
          streamId: p.streamId,
          ordered: p.ordered,
        },
      ]),
    );
  }

  /** The URL of each of these webhooks, enabled or not, by {@link webhookKey}; absent: no webhook preference. */
  webhookUrls(pairs: readonly { userId: number; type: EventType }[], manager?: EntityManager): Promise<Map<string, string | null>> {
    return (manager ? this.preferences.in(manager) : this.preferences).webhookUrls(pairs);
  }

  /** The configured webhook URL and secret, enabled or not (for test sends). */
  async configuredWebhook(userId: number, type: EventType): Promise<WebhookTarget | null> {
    const preference = await this.preferences.findOne({ userId, type, channel: WEBHOOK });
    if (!preference?.webhookUrl) return null;
    const schemes = schemesOf(preference.signatureSchemes);
    const secrets = await this.secrets.secretForSigning(preference.id);
    const keys = schemes.includes(SignatureScheme.ED25519) ? await this.secrets.signingKeysFor(preference.id) : [];
    return targetOf(preference.webhookUrl, schemes, secrets ?? undefined, keys);
  }

  /** Whether the stream of the preference's URL delivers in order. */
  private async isOrdered(preference: NotificationPreference): Promise<boolean> {
    return (await this.orderedOf([preference])).get(preference.streamId ?? 0) ?? false;
  }

  /** Whether each of these preferences' streams delivers in order, by stream id. */
  private orderedOf(preferences: readonly NotificationPreference[]): Promise<Map<number, boolean>> {
    return this.streams.orderedOf(preferences.flatMap((p) => (p.channel === WEBHOOK && p.streamId !== null ? [p.streamId] : [])));
  }

  private async publicKeyOf(preferenceId: number): Promise<PublicSigningKeys | undefined> {
    return (await this.secrets.publicSigningKeys([preferenceId])).get(preferenceId);
  }

  private publicKeysOf(preferences: readonly NotificationPreference[]): Promise<Map<number, PublicSigningKeys>> {
    return this.secrets.publicSigningKeys(preferences.filter((p) => p.channel === WEBHOOK).map((p) => p.id));
  }

  private secretsOf(preferences: readonly NotificationPreference[]): Promise<Set<number>> {
    return this.secrets.preferenceIdsWithSecret(preferences.filter((p) => p.channel === WEBHOOK).map((p) => p.id));
  }

  private async acceptedWebhookUrl(userId: number, { channel, enabled, webhookUrl }: UpsertPreferenceDto): Promise<string | undefined> {
    if (channel !== WEBHOOK) {
      if (webhookUrl != null) throw InvalidFieldsException.of('webhookUrl', `is only accepted with channel ${WEBHOOK}`);
      return undefined;
    }
    if (webhookUrl == null) {
      if (enabled) throw InvalidFieldsException.of('webhookUrl', `is required when enabling the ${WEBHOOK} channel`);
      return undefined;
    }
    try {
      // Stored and answered as validated: the WHATWG serialization (a lone surrogate becomes %EF%BF%BD, the host lowercase).
      return (await this.urlPolicy.assertSafeToSave(webhookUrl, { userId })).href;
    } catch (error) {
      if (error instanceof UnsafeWebhookUrlError) throw InvalidFieldsException.of('webhookUrl', error.message);
      throw error;
    }
  }
}

/** Ordered delivery as asked for (undefined: keep it); refused on channels other than WEBHOOK. */
function acceptedOrdered({ channel, orderedDelivery }: UpsertPreferenceDto): boolean | undefined {
  if (orderedDelivery == null) return undefined;
  if (channel !== WEBHOOK) throw InvalidFieldsException.of('orderedDelivery', `is only accepted with channel ${WEBHOOK}`);
  return orderedDelivery;
}

/** The schemes asked for, as stored; refused on channels other than WEBHOOK. */
function acceptedSchemes({ channel, signatureSchemes }: UpsertPreferenceDto): string | undefined {
  if (signatureSchemes == null) return undefined;
  if (channel !== WEBHOOK) throw InvalidFieldsException.of('signatureSchemes', `is only accepted with channel ${WEBHOOK}`);
  return storedSchemes(signatureSchemes);
}

/**
 * How to sign a webhook now. A scheme it cannot sign with (no secret, no key pair, or one that does not decrypt) makes
 * it unusable: its attempts fail without a request, never go out unsigned or signed with fewer schemes than chosen.
 */
function targetOf(
  url: string,
  schemes: readonly SignatureScheme[],
  secrets: SigningSecrets | Error | undefined,
  keys: KeyObject[] | Error | undefined,
): WebhookTarget {
  if (!secrets || secrets instanceof Error) return { url, secret: null, unusableSecret: secrets?.message ?? NO_SIGNING_SECRET };
  if (!schemes.includes(SignatureScheme.ED25519)) return { url, secret: secrets.secret, previousSecret: secrets.previous };
  if (!keys || keys instanceof Error || keys.length === 0)
    return { url, secret: null, unusableSecret: keys instanceof Error ? keys.message : NO_SIGNING_KEY };
  return { url, secret: { schemes, secret: secrets.secret, previousSecret: secrets.previous, signingKeys: keys } };
}

/** The signing fields of a WEBHOOK row: its schemes, and its public key(s) when it has a key pair. */
function signingOf(preference: NotificationPreference | undefined, keys: PublicSigningKeys | undefined) {
  const signing: Pick<
    PreferenceDto,
    'signatureSchemes' | 'signingPublicKey' | 'previousSigningPublicKey' | 'previousSigningPublicKeyValidUntil'
  > = {
    signatureSchemes: schemesOf(preference?.signatureSchemes),
  };
  if (!keys) return signing;
  signing.signingPublicKey = keys.publicKey;
  if (keys.previousPublicKey !== null && keys.previousUntil !== null) {
    signing.previousSigningPublicKey = keys.previousPublicKey;
    signing.previousSigningPublicKeyValidUntil = new Date(keys.previousUntil).toISOString();
  }
  return signing;
}

function toDto(preference: NotificationPreference, hasWebhookSecret: boolean, keys?: PublicSigningKeys, ordered = false): PreferenceDto {
  const base = {
    type: preference.type,
    channel: preference.channel,
    enabled: preference.enabled,
    updatedAt: new Date(preference.updatedAt).toISOString(),
  };
  if (preference.channel !== WEBHOOK) return base;
  return withDisabledReason(
    { ...base, webhookUrl: preference.webhookUrl, hasWebhookSecret, orderedDelivery: ordered, ...signingOf(preference, keys) },
    preference,
  );
}

// `disabledReasonCode` and `disabledReason` appear only while auto-disable, their one writer, has turned the webhook off.
function withDisabledReason<T extends object>(
  webhook: T,
  preference: NotificationPreference | undefined,
): T & { disabledReasonCode?: WebhookDisabledReasonCode; disabledReason?: string } {
  return preference?.disabledReason
    ? { ...webhook, disabledReasonCode: WebhookDisabledReasonCode.CONSECUTIVE_FAILURES, disabledReason: preference.disabledReason }
    : webhook;
}
