import { Injectable, type LoggerService, Module, type OnModuleInit } from '@nestjs/common';
import { config, filter } from 'rxjs';
import request from 'supertest';
import { type AttemptRecorded, DeliveryEvents, EventType, Severity } from '@funding/notification-webhooks';
import { bootTestNotifications, type TestNotifications } from '@funding/notification-webhooks/testing';

/** A host's hooks with a bug: both throw on every delivery. */
@Injectable()
class BuggyHostHooks implements OnModuleInit {
  readonly seen: number[] = [];
  constructor(private readonly events: DeliveryEvents) {}

  onModuleInit(): void {
    this.events.attemptRecorded.subscribe(({ deliveryId }) => {
      this.seen.push(deliveryId);
      throw new Error(`host hook bug on delivery ${deliveryId}`);
    });
    this.events.attemptRecorded.pipe(filter((attempt: AttemptRecorded) => attempt.status === 'DELIVERED')).subscribe(() => {
      throw new TypeError('piped host hook bug');
    });
  }
}

@Module({ providers: [BuggyHostHooks] })
class BuggyHostHooksModule {}

describe('DeliveryEvents with a host subscriber that throws', () => {
  let kit: TestNotifications;
  const errors: string[] = [];
  const unhandled: unknown[] = [];
  const logger: LoggerService = { log() {}, warn() {}, error: (message: string) => errors.push(message) };

  beforeAll(async () => {
    kit = await bootTestNotifications({ imports: [BuggyHostHooksModule] });
    kit.app.useLogger(logger);
    // Without a guard, RxJS rethrows a subscriber's error on a timer, which ends the process; here it would land in this list.
    config.onUnhandledError = (error) => unhandled.push(error);
  });
  afterAll(async () => {
    config.onUnhandledError = null;
    await kit.close();
  });

  it('still delivers, logs each error once, keeps the subscriber and never reports an unhandled error', async () => {
    const secret = await kit.enableWebhook(5, EventType.LOAN_EXECUTED);
    const event = (n: number) => ({ userId: 5, type: EventType.LOAN_EXECUTED, severity: Severity.INFO, title: `Loan ${n}`, body: '1 USD' });
    await kit.publisher.publish(event(1));
    await kit.publisher.publish(event(2));

    const hooks = await kit.waitForDelivery({ userId: 5, count: 2 });
    expect(hooks.every((hook) => hook.isSignedWith(secret))).toBe(true);
    const log = await request(kit.app.getHttpServer())
      .get('/api/v1/settings/notifications/webhook-deliveries')
      .set('Authorization', kit.bearer(5))
      .expect(200);
    expect(log.body.data.map((delivery: { status: string }) => delivery.status)).toEqual(['DELIVERED', 'DELIVERED']);

    await new Promise((resolve) => setTimeout(resolve, 5)); // one timer turn: when RxJS would report an unhandled error
    expect(unhandled).toEqual([]);
    expect(kit.app.get(BuggyHostHooks).seen).toHaveLength(2);
    const [first, second] = kit.app.get(BuggyHostHooks).seen;
    expect(errors.filter((message) => message.includes('host hook bug on delivery')).sort()).toEqual(
      [first, second]
        .map((id) => `A subscriber of DeliveryEvents.attemptRecorded threw; delivery goes on: Error: host hook bug on delivery ${id}`)
        .sort(),
    );
    expect(errors.filter((message) => message.includes('piped host hook bug'))).toHaveLength(2);
    expect(errors).toHaveLength(4);
  });
});
