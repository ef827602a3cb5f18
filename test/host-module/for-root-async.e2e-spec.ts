import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import request from 'supertest';
import { EventType, Severity, signUserToken } from '@funding/notification-webhooks';
import {
  attachNotificationsTestKit,
  type NotificationsTestKit,
  startTestReceiver,
  TestClock,
} from '@funding/notification-webhooks/testing';
import { HostConfig, JWT_SECRET } from './for-root-async/host-config.module';
import { UseClassHostModule } from './for-root-async/use-class.module';
import { UseExistingHostModule } from './for-root-async/use-existing.module';
import { UseFactoryHostModule } from './for-root-async/use-factory.module';

// One host module per variant, as nestjs/typeorm keeps them, each booted for real on SQLite.
describe.each([
  { variant: 'useFactory', hostModule: UseFactoryHostModule },
  { variant: 'useClass', hostModule: UseClassHostModule },
  { variant: 'useExisting', hostModule: UseExistingHostModule },
])('NotificationsModule.forRootAsync({ $variant })', ({ hostModule }) => {
  let app: INestApplication;
  let kit: NotificationsTestKit;

  beforeAll(async () => {
    const wiring = { receiver: await startTestReceiver(), clock: new TestClock() };
    app = await NestFactory.create(hostModule.forRoot(new HostConfig(wiring)), { logger: false, abortOnError: false });
    await app.init();
    kit = attachNotificationsTestKit(app, wiring);
  });
  afterAll(async () => {
    await app?.close();
    await kit?.receiver.close();
  });

  it("boots with the host's options and delivers a published event, signed, to the loopback receiver", async () => {
    const secret = await kit.enableWebhook(11, EventType.LOAN_EXECUTED);
    await kit.publisher.publish({
      userId: 11,
      type: EventType.LOAN_EXECUTED,
      severity: Severity.INFO,
      title: 'Loan executed',
      body: '5 USD',
    });

    const [hook] = await kit.waitForDelivery({ userId: 11 });
    expect(hook.isSignedWith(secret)).toBe(true);
    expect(hook.json()).toMatchObject({ type: 'LOAN_EXECUTED', userId: 11, title: 'Loan executed' });
    const log = await request(app.getHttpServer())
      .get('/api/v1/settings/notifications/webhook-deliveries')
      .set('Authorization', `Bearer ${signUserToken(JWT_SECRET, 11)}`)
      .expect(200);
    expect(log.body.data).toEqual([expect.objectContaining({ status: 'DELIVERED', attemptCount: 1 })]);
  });
});
