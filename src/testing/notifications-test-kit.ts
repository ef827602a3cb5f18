import type { INestApplication } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import type { EventType } from '../notifications/catalog/event-catalog';
import { NotificationChannel } from '../notifications/catalog/event-catalog';
import { Clock } from '../notifications/clock/clock';
import { DeliveryEvents } from '../notifications/delivery/events/delivery-events.service';
import { OutboxEngine } from '../notifications/delivery/engine/outbox-engine.service';
import { WebhookPublisher } from '../notifications/delivery/publishing/webhook-publisher.service';
import { NotificationPreferences } from '../notifications/preferences/notification-preferences.service';
import { webhookKey } from '../notifications/preferences/webhook-key';
import { WebhookHealthRecorder } from '../notifications/webhook-health/webhook-health-recorder.service';
import { DeliveryScheduler } from '../notifications/scheduler/delivery-scheduler.service';
import type { ReceivedRequest } from './received-request';
import type { TestClock } from './test-clock';
import type { TestReceiver, WaitForDelivery } from './test-receiver';

// The @Cron of DeliveryScheduler; the kit stops it so that only the test moves deliveries forward.
const RETRY_CRON_NAME = 'webhook-delivery-retries';

/** Drives a running app's notifications in a test: time, scheduler runs, webhooks to the receiver. */
export interface NotificationsTestKit {
  readonly app: INestApplication;
  readonly receiver: TestReceiver;
  readonly clock: TestClock;
  /** The module's publisher, as your services would inject it. */
  readonly publisher: WebhookPublisher;
  /**
   * Enables the WEBHOOK channel of `type` for `userId`, pointing at `receiver.url(path)`, and returns its signing
   * secret (the kit remembers secrets it was shown, so a repeated call returns the same one).
   */
  enableWebhook(userId: number, type: EventType | `${EventType}`, path?: string): Promise<string>;
  /** Moves the test clock forward; nothing runs until {@link runScheduler}. */
  advance(ms: number): void;
  /**
   * One scheduler run, as the every-minute cron would do: attempts what is due now, including what the run's claims
   * leave for later claims of the same run (a user's fair share per claim); resolves with how many deliveries were
   * attempted or cancelled.
   */
  runScheduler(): Promise<number>;
  /** Resolves once every attempt started so far is recorded in the database (and in the webhooks' health). */
  settle(): Promise<void>;
  /** `receiver.waitForDelivery(wait)`, then {@link settle}, so the delivery log already shows those attempts. */
  waitForDelivery(wait?: WaitForDelivery): Promise<ReceivedRequest[]>;
}

/**
 * Attaches the kit to an app you booted yourself with {@link notificationsTestOptions} in the module options.
 * Stops the module's every-minute cron (and, on MySQL/MariaDB, the poll every second of an `all` process): in a test,
 * {@link NotificationsTestKit.runScheduler} is the only scheduler run.
 */
export function attachNotificationsTestKit(
  app: INestApplication,
  wiring: { receiver: TestReceiver; clock: TestClock },
): NotificationsTestKit {
  const { receiver, clock } = wiring;
  if (app.get(Clock, { strict: false }) !== clock) {
    throw new Error(
      'attachNotificationsTestKit: the app does not use this TestClock; pass notificationsTestOptions({ receiver, clock }) to NotificationsModule.',
    );
  }
  void app.get(SchedulerRegistry, { strict: false }).getCronJobs().get(RETRY_CRON_NAME)?.stop();
  const engine = app.get(OutboxEngine, { strict: false });
  engine.stopPolling();
  const scheduler = app.get(DeliveryScheduler, { strict: false });
  const events = app.get(DeliveryEvents, { strict: false });
  const preferences = app.get(NotificationPreferences, { strict: false });
  const secrets = new Map<string, string>();

  const health = app.get(WebhookHealthRecorder, { strict: false });
  // The health rows follow the records a moment later, off the delivery path: settled too, so the settings API shows them.
  const settle = async () => {
    await engine.idle();
    await health.idle();
  };
  return {
    app,
    receiver,
    clock,
    publisher: app.get(WebhookPublisher, { strict: false }),
    async enableWebhook(userId, type, path = '/hook') {
      const key = webhookKey(userId, type as EventType);
      const saved = await preferences.upsert(userId, {
        type: type as EventType,
        channel: NotificationChannel.WEBHOOK,
        enabled: true,
        webhookUrl: receiver.url(path),
      });
      if (saved.webhookSecret) secrets.set(key, saved.webhookSecret);
      const secret = secrets.get(key);
      if (!secret)
        throw new Error(`enableWebhook: ${type} of user ${userId} already had a secret before this kit saw it; it is shown only once.`);
      return secret;
    },
    advance: (ms) => clock.advance(ms),
    async runScheduler() {
      let attempted = 0;
      const count = () => attempted++;
      const subscriptions = [events.attemptRecorded.subscribe(count), events.deliveryCancelled.subscribe(count)];
      try {
        await scheduler.tick();
        await settle();
      } finally {
        for (const subscription of subscriptions) subscription.unsubscribe();
      }
      return attempted;
    },
    settle,
    async waitForDelivery(wait) {
      const arrived = await receiver.waitForDelivery(wait);
      await settle();
      return arrived;
    },
  };
}
