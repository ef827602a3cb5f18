import { Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { DeliveryEvents, type WebhookHealthChanged } from '@funding/notification-webhooks';
import type { Subscription } from 'rxjs';

export interface InboxMessage {
  readonly at: string;
  readonly title: string;
  readonly body: string;
}

const TITLES: Record<WebhookHealthChanged['change'], string> = {
  became_failing: 'Your webhook is failing',
  circuit_opened: 'Your webhook endpoint stopped answering',
  circuit_closed: 'Your webhook endpoint answers again',
  recovered: 'Your webhook works again',
  disabled: 'Your webhook was turned off',
};

/**
 * Our in-app channel (kept in memory here; a real app stores it): among other things, it tells a user when one of
 * their webhooks changes health, from NotificationsModule's `DeliveryEvents.webhookHealthChanged`.
 */
@Injectable()
export class InboxService implements OnModuleInit, OnModuleDestroy {
  private readonly messages = new Map<number, InboxMessage[]>();
  private subscription?: Subscription;

  constructor(private readonly deliveryEvents: DeliveryEvents) {}

  onModuleInit(): void {
    this.subscription = this.deliveryEvents.webhookHealthChanged.subscribe((change) => this.add(change.userId, messageOf(change)));
  }

  onModuleDestroy(): void {
    this.subscription?.unsubscribe();
  }

  forUser(userId: number): InboxMessage[] {
    return this.messages.get(userId) ?? [];
  }

  private add(userId: number, message: InboxMessage): void {
    this.messages.set(userId, [...this.forUser(userId), message]);
  }
}

function messageOf(change: WebhookHealthChanged): InboxMessage {
  const facts = [`${change.failedAttemptsInRow} failed attempts in a row`];
  if (change.lastStatusCode !== null) facts.push(`last answer HTTP ${change.lastStatusCode}`);
  if (change.circuitOpenUntil !== null) facts.push(`paused until ${new Date(change.circuitOpenUntil).toISOString()}`);
  const advice = change.to === 'HEALTHY' ? '' : ' Check your endpoint in the notification settings.';
  return {
    at: new Date(change.at).toISOString(),
    title: TITLES[change.change],
    body: `${change.type} webhook: ${facts.join(', ')}.${advice}`,
  };
}
