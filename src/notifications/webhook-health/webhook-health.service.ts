import { Inject, Injectable } from '@nestjs/common';
import { NotificationChannel } from '../catalog/event-catalog';
import { DeliveriesService } from '../delivery/delivery-log/deliveries.service';
import type { WebhookHealthState } from '../delivery/events/delivery-events.service';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import type { PreferenceDto } from '../preferences/dto/preference.dto';
import { PreferencesService } from '../preferences/preferences.service';
import { streamUrlHash } from '../preferences/webhook-stream.repository';
import type { OrderedHead } from '../delivery/delivery-log/delivery-log.repository';
import { failingAfterAttempts } from './health-settings';
import { type HealthFacts, NO_HEALTH_FACTS, storedState } from './health-transitions';
import { WAITING_COUNT_CAP, type WebhookHealthDto } from './webhook-health.dto';
import { WebhookHealthRepository } from './webhook-health.repository';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A user's webhooks and how each is doing: the settings API's health view. */
@Injectable()
export class WebhookHealthService {
  private readonly failingAfter: number;

  constructor(
    private readonly preferences: PreferencesService,
    private readonly deliveries: DeliveriesService,
    private readonly health: WebhookHealthRepository,
    @Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions,
  ) {
    this.failingAfter = failingAfterAttempts(options);
  }

  /** One item per saved WEBHOOK preference, in the order the preferences list them. */
  async list(userId: number): Promise<WebhookHealthDto[]> {
    const webhooks = (await this.preferences.list(userId)).filter((preference) => preference.channel === NotificationChannel.WEBHOOK);
    if (webhooks.length === 0) return [];
    const [rows, waiting, heads] = await Promise.all([
      this.health.forUser(userId),
      this.deliveries.waitingByType(userId, WAITING_COUNT_CAP),
      webhooks.some((webhook) => webhook.orderedDelivery) ? this.deliveries.orderedHeads(userId) : new Map<string, OrderedHead>(),
    ]);
    const byType = new Map(rows.map((row) => [row.type, row]));
    return webhooks.map((webhook) => {
      const head = webhook.orderedDelivery && webhook.webhookUrl ? heads.get(streamUrlHash(webhook.webhookUrl)) : undefined;
      return this.toDto(webhook, byType.get(webhook.type) ?? NO_HEALTH_FACTS, waiting.get(webhook.type) ?? 0, head);
    });
  }

  private toDto(webhook: PreferenceDto, facts: HealthFacts, waitingDeliveries: number, head?: OrderedHead): WebhookHealthDto {
    return {
      type: webhook.type,
      webhookUrl: webhook.webhookUrl ?? null,
      enabled: webhook.enabled,
      state: this.stateOf(webhook, facts),
      ...(webhook.disabledReasonCode ? { disabledReasonCode: webhook.disabledReasonCode, disabledReason: webhook.disabledReason } : {}),
      disabledAt: iso(facts.disabledAt),
      failedAttemptsInRow: facts.failedAttemptsInRow,
      failingSince: iso(facts.failingSince),
      ...(facts.lastAttemptAt === null
        ? {}
        : {
            lastAttempt: {
              at: iso(facts.lastAttemptAt)!,
              outcome: facts.lastOutcome!,
              statusCode: facts.lastStatusCode,
              error: facts.lastError,
            },
          }),
      lastSuccessAt: iso(facts.lastSuccessAt),
      circuitOpenUntil: iso(facts.circuitOpenUntil),
      waitingDeliveries,
      orderedDelivery: webhook.orderedDelivery ?? false,
      ...(head
        ? {
            orderedHead: {
              deliveryId: head.deliveryId,
              type: head.type,
              sequence: head.sequence,
              attemptCount: head.attemptCount,
              nextAttemptAt: iso(head.nextAttemptAt),
              lastError: head.lastError,
            },
          }
        : {}),
      waitingBehind: head?.waitingBehind ?? 0,
    };
  }

  private stateOf(webhook: PreferenceDto, facts: HealthFacts): WebhookHealthState {
    if (!webhook.enabled) return webhook.disabledReasonCode ? 'DISABLED' : 'OFF';
    return storedState(facts, this.failingAfter);
  }
}
