import { randomBytes } from 'node:crypto';
import { Catch, Injectable, Module } from '@nestjs/common';
import type { ArgumentsHost, ExceptionFilter, INestApplication, LoggerService } from '@nestjs/common';
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
import { databaseOptions } from '../../src/service/database/database-options';
import { describeEachDatabase } from '../support/each-database';
import type { TestDatabaseKind } from '../support/test-databases';

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

/** The host's own global filter for every error, in a shape of its own: the module's routes keep theirs. */
@Catch()
class HostCatchAll implements ExceptionFilter {
  catch(_exception: unknown, host: ArgumentsHost): void {
    host.switchToHttp().getResponse().status(418).json({ hostError: true });
  }
}

interface LogLine {
  readonly level: string;
  readonly message: unknown;
  readonly context: unknown;
}

/** The host's own Nest logger, keeping what it is given. */
class HostLogger implements LoggerService {
  readonly lines: LogLine[] = [];
  log = (message: unknown, ...params: unknown[]) => this.keep('log', message, params);
  warn = (message: unknown, ...params: unknown[]) => this.keep('warn', message, params);
  error = (message: unknown, ...params: unknown[]) => this.keep('error', message, params);
  debug = (message: unknown, ...params: unknown[]) => this.keep('debug', message, params);
  verbose = (message: unknown, ...params: unknown[]) => this.keep('verbose', message, params);
  fatal = (message: unknown, ...params: unknown[]) => this.keep('fatal', message, params);
  deliveryLines(): LogLine[] {
    return this.lines.filter((line) => line.context === 'WebhookDelivery');
  }
  private keep(level: string, message: unknown, params: unknown[]): void {
    this.lines.push({ level, message, context: params.at(-1) });
  }
}

interface HostApp {
  readonly app: INestApplication;
  readonly kit: NotificationsTestKit;
  readonly logger: HostLogger;
  close(): Promise<void>;
}

/** NotificationsModule imported into a host app with the host's own DataSource, user resolution and Nest logger. */
async function bootHostApp(kind: TestDatabaseKind, options: { deliveryLogs?: boolean } = {}): Promise<HostApp> {
  const database = await kind.create();
  const receiver = await startTestReceiver();
  const clock = new TestClock();
  const logger = new HostLogger();
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
          ...options,
        }),
      }),
      LoanDeskModule,
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger });
  app.useGlobalFilters(new HostCatchAll());
  await app.init();
  const kit = attachNotificationsTestKit(app, { receiver, clock });
  return {
    app,
    kit,
    logger,
    async close() {
      await app.close();
      await receiver.close();
      await database.drop();
    },
  };
}

describeEachDatabase('NotificationsModule inside a host app on $name', (kind) => {
  let host: HostApp;
  let app: INestApplication;
  let kit: NotificationsTestKit;

  beforeAll(async () => {
    host = await bootHostApp(kind);
    ({ app, kit } = host);
  });

  afterAll(() => host.close());

  it("serves the settings API with the host's own user resolution", async () => {
    const enabled = await request(app.getHttpServer())
      .put('/api/v1/settings/notifications')
      .set('x-host-user', '42')
      .send({ type: 'KILL_SWITCH_ACTIVATED', channel: 'WEBHOOK', enabled: true, webhookUrl: 'https://hooks.example.com/k' })
      .expect(200);
    expect(enabled.body.webhookSecret).toMatch(/^whsec_/);

    // The host's global filter answers its own errors; the module's routes keep the module's error shape.
    expect((await request(app.getHttpServer()).get('/host/unknown').expect(418)).body).toEqual({ hostError: true });
    const refused = await request(app.getHttpServer()).get('/api/v1/settings/notifications').expect(401);
    expect(refused.body).toEqual({ statusCode: 401, error: 'Unauthorized', message: 'Authentication is required' });
    const invalid = await request(app.getHttpServer())
      .put('/api/v1/settings/notifications')
      .set('x-host-user', '42')
      .send({ type: 'KILL_SWITCH_ACTIVATED', channel: 'WEBHOOK', enabled: true, webhookUrl: 'http://hooks.example.com/k' })
      .expect(400);
    expect(invalid.body).toMatchObject({
      statusCode: 400,
      error: 'Bad Request',
      errors: [expect.objectContaining({ field: 'webhookUrl' })],
    });
    const missing = await request(app.getHttpServer())
      .get('/api/v1/settings/notifications/webhook-deliveries/999')
      .set('x-host-user', '42');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ statusCode: 404, error: 'Not Found' });
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

describeEachDatabase('delivery logs of a host app on $name', (kind) => {
  const failedAttempt = async (host: HostApp, userId: number) => {
    await host.kit.enableWebhook(userId, EventType.LOAN_EXECUTED);
    host.kit.receiver.respondWith({ status: 500, body: 'down' });
    await host.app.get(LoanDesk).loanExecuted(userId, 1000);
    await host.kit.waitForDelivery({ userId });
  };

  it("logs each attempt through the host's Nest logger: a warning when the receiver answered 500, ids and status only", async () => {
    const host = await bootHostApp(kind);
    try {
      await failedAttempt(host, 51);
      const [line] = host.logger.deliveryLines();
      expect(line).toEqual({
        level: 'warn',
        context: 'WebhookDelivery',
        message: expect.objectContaining({
          msg: 'webhook attempt failed; will retry',
          userId: 51,
          type: 'LOAN_EXECUTED',
          attemptNumber: 1,
          outcome: 'http_error',
          statusCode: 500,
          status: 'PENDING',
        }),
      });
      const logged = JSON.stringify(host.logger.lines);
      expect(logged).not.toContain(host.kit.receiver.url('/hook'));
      expect(logged).not.toContain('whsec_');
    } finally {
      await host.close();
    }
  });

  it('logs no delivery activity with deliveryLogs: false', async () => {
    const host = await bootHostApp(kind, { deliveryLogs: false });
    try {
      await failedAttempt(host, 52);
      expect(host.logger.deliveryLines()).toEqual([]);
      expect(host.logger.lines.length).toBeGreaterThan(0); // the host's logger still gets Nest's own lines
    } finally {
      await host.close();
    }
  });
});
