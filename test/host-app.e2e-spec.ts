import { randomBytes } from 'node:crypto';
import { Injectable, Module } from '@nestjs/common';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Request } from 'express';
import request from 'supertest';
import { DataSource } from 'typeorm';
import {
  EventType,
  NOTIFICATIONS_ENTITIES,
  NOTIFICATIONS_MIGRATIONS,
  NotificationChannel,
  NotificationPreferences,
  NotificationsModule,
  Severity,
  WebhookPublisher,
} from '@funding/notification-webhooks';
import {
  attachNotificationsTestKit,
  type NotificationsTestKit,
  notificationsTestOptions,
  startTestReceiver,
  TestClock,
} from '@funding/notification-webhooks/testing';
import { databaseOptions } from '../src/database/database-options';
import { TEST_DATABASE_KINDS, type TestDatabase } from './support/test-databases';

/** The host's own configuration and user resolution, as a larger Nest app would have them. */
@Injectable()
class HostSettings {
  readonly encryptionKey = randomBytes(32);
  userIdFrom(request: Request): number | undefined {
    const id = Number(request.headers['x-host-user']);
    return Number.isInteger(id) && id > 0 ? id : undefined;
  }
}

@Module({ providers: [HostSettings], exports: [HostSettings] })
class HostSettingsModule {}

/** A host feature that publishes and reads preferences; it injects them without importing NotificationsModule again. */
@Injectable()
class LoanDesk {
  constructor(
    private readonly webhooks: WebhookPublisher,
    readonly preferences: NotificationPreferences,
  ) {}
  loanExecuted(userId: number, amount: number) {
    return this.webhooks.publish({
      userId,
      type: EventType.LOAN_EXECUTED,
      severity: Severity.INFO,
      title: 'Loan executed',
      body: `${amount} USD`,
      payload: { amount },
    });
  }
}

@Module({ providers: [LoanDesk] })
class LoanDeskModule {}

describe.each(TEST_DATABASE_KINDS)('NotificationsModule inside a host app on $name', (kind) => {
  let database: TestDatabase;
  let app: INestApplication;
  let kit: NotificationsTestKit;

  beforeAll(async () => {
    database = await kind.create();
    const receiver = await startTestReceiver();
    const clock = new TestClock();
    const hostDataSource = { ...databaseOptions(database.config), entities: [], autoLoadEntities: true };
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        TypeOrmModule.forRoot({ ...hostDataSource, migrations: NOTIFICATIONS_MIGRATIONS, migrationsRun: true }),
        NotificationsModule.forRootAsync({
          imports: [HostSettingsModule],
          inject: [HostSettings],
          useFactory: (settings: HostSettings) => ({
            resolveUserId: (req: Request) => settings.userIdFrom(req),
            encryptionKeys: [{ id: 'host', key: settings.encryptionKey }],
            ...notificationsTestOptions({ receiver, clock }),
          }),
        }),
        LoanDeskModule,
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    kit = attachNotificationsTestKit(app, { receiver, clock });
  });

  afterAll(async () => {
    await app.close();
    await kit.receiver.close();
    await database.drop();
  });

  it("serves the settings API with the host's own user resolution", async () => {
    const enabled = await request(app.getHttpServer())
      .put('/api/v1/settings/notifications')
      .set('x-host-user', '42')
      .send({ type: 'KILL_SWITCH_ACTIVATED', channel: 'WEBHOOK', enabled: true, webhookUrl: 'https://hooks.example.com/k' })
      .expect(200);
    expect(enabled.body.webhookSecret).toMatch(/^whsec_/);

    await request(app.getHttpServer()).get('/api/v1/settings/notifications').expect(401);
    const listed = await request(app.getHttpServer()).get('/api/v1/settings/notifications').set('x-host-user', '42').expect(200);
    expect(listed.body).toEqual([expect.objectContaining({ type: 'KILL_SWITCH_ACTIVATED', hasWebhookSecret: true })]);
  });

  it("lets the host's own services read preferences through the exported NotificationPreferences", async () => {
    const effective = await app.get(LoanDesk).preferences.effective(42);
    expect(effective).toContainEqual(
      expect.objectContaining({ type: EventType.KILL_SWITCH_ACTIVATED, channel: NotificationChannel.WEBHOOK, enabled: true }),
    );
  });

  it("delivers what the host's own service publishes, signed with the user's secret", async () => {
    const secret = await kit.enableWebhook(43, EventType.LOAN_EXECUTED);
    await app.get(LoanDesk).loanExecuted(43, 1000);
    const [hook] = await kit.waitForDelivery({ userId: 43 });
    expect(hook.isSignedWith(secret)).toBe(true);
    expect(hook.json()).toMatchObject({ type: 'LOAN_EXECUTED', userId: 43, payload: { amount: 1000 } });
  });

  it("puts every module entity on the host's DataSource through autoLoadEntities", () => {
    const tables = app.get(DataSource).entityMetadatas.map((metadata) => metadata.target);
    expect(tables).toEqual(expect.arrayContaining([...NOTIFICATIONS_ENTITIES]));
  });
});
