import { randomBytes } from 'node:crypto';
import type { INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { DeliveryStatus, WebhookDelivery } from '@funding/notification-webhooks';
import {
  attachNotificationsTestKit,
  type NotificationsTestKit,
  notificationsTestOptions,
  startTestReceiver,
  TestClock,
} from '@funding/notification-webhooks/testing';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { AppModule } from '../src/app.module';
import { hostConfigFromEnv, NOT_FOR_PRODUCTION } from '../src/host-config';
import { Loan } from '../src/loans/loan.entity';
import { LoansService } from '../src/loans/loans.service';
import { createMysqlTestDatabase } from './mysql-test-database';

const SETTINGS = '/api/v1/settings/notifications';

describe('host app on MariaDB: loans publish LOAN_EXECUTED to the user webhook', () => {
  let database: Awaited<ReturnType<typeof createMysqlTestDatabase>>;
  let app: INestApplication;
  let kit: NotificationsTestKit;

  beforeAll(async () => {
    database = await createMysqlTestDatabase(process.env.TEST_MYSQL_URL!);
    const receiver = await startTestReceiver();
    const clock = new TestClock();
    app = await NestFactory.create(
      AppModule.forRoot({
        databaseUrl: database.url,
        webhookSecretsKey: randomBytes(32),
        notificationsForTests: notificationsTestOptions({ receiver, clock }),
      }),
      { logger: false, abortOnError: false },
    );
    await app.init();
    kit = attachNotificationsTestKit(app, { receiver, clock });
  });
  afterAll(async () => {
    await app?.close();
    await kit?.receiver.close();
    await database?.drop();
  });
  beforeEach(() => kit.receiver.clear());

  const http = () => request(app.getHttpServer());
  const enableLoanWebhook = async (userId: number) => {
    const saved = await http()
      .put(SETTINGS)
      .set('x-user-id', String(userId))
      .send({ type: 'LOAN_EXECUTED', channel: 'WEBHOOK', enabled: true, webhookUrl: kit.receiver.url(`/users/${userId}`) })
      .expect(200);
    return saved.body.webhookSecret as string;
  };
  const loan = { currency: 'USD', amount: 1000, dailyRate: 0.0002, days: 2 };

  it('sends a signed LOAN_EXECUTED when a loan is executed through the host API', async () => {
    const secret = await enableLoanWebhook(11);
    const executed = await http().post('/loans').set('x-user-id', '11').send(loan).expect(201);

    const [hook] = await kit.waitForDelivery({ userId: 11, type: 'LOAN_EXECUTED' });
    expect(hook.path).toBe('/users/11');
    expect(hook.isSignedWith(secret)).toBe(true);
    expect(hook.json()).toMatchObject({
      type: 'LOAN_EXECUTED',
      userId: 11,
      payload: { loanId: executed.body.id, amount: 1000, currency: 'USD' },
    });
    const delivery = await app.get(DataSource).getRepository(WebhookDelivery).findOneByOrFail({ userId: 11 });
    expect(delivery.status).toBe(DeliveryStatus.DELIVERED);
  });

  it('stores the loan and its notification in one transaction: a rollback leaves neither and sends nothing', async () => {
    await enableLoanWebhook(13);
    const dataSource = app.get(DataSource);
    const rolledBack = dataSource.transaction(async (manager) => {
      await app.get(LoansService).recordLoan(manager, 13, loan);
      throw new Error('the ledger refused the loan');
    });
    await expect(rolledBack).rejects.toThrow('the ledger refused the loan');
    await kit.settle();

    expect(await dataSource.getRepository(Loan).countBy({ userId: 13 })).toBe(0);
    expect(await dataSource.getRepository(WebhookDelivery).countBy({ userId: 13 })).toBe(0);
    expect(kit.receiver.requests).toHaveLength(0);

    const executed = await app.get(LoansService).executeLoan(13, loan);
    const [hook] = await kit.waitForDelivery({ userId: 13 });
    expect(hook.json()).toMatchObject({ payload: { loanId: executed.id } });
    expect(await dataSource.getRepository(WebhookDelivery).countBy({ userId: 13 })).toBe(1);
  });

  it("authenticates both the host's and the module's endpoints with the host's own rule", async () => {
    await http().post('/loans').send(loan).expect(401);
    await http().get(SETTINGS).expect(401);
    await http().get(SETTINGS).set('x-user-id', 'abc').expect(401);
  });

  it("retries from the host's scheduler when the webhook fails, on the test clock", async () => {
    await enableLoanWebhook(12);
    kit.receiver.respondNext([{ status: 503 }]);
    await app.get(LoansService).executeLoan(12, loan);
    await kit.waitForDelivery({ userId: 12 });

    kit.advance(60_000);
    expect(await kit.runScheduler()).toBe(1);
    const attempts = await kit.waitForDelivery({ userId: 12, count: 2 });
    expect(attempts.map((hook) => [hook.attempt, hook.eventId])).toEqual([
      [1, attempts[0].eventId],
      [2, attempts[0].eventId],
    ]);
  });

  it('tells the user in our in-app inbox when their webhook starts failing and when it works again', async () => {
    await enableLoanWebhook(13);
    kit.receiver.respondWith({ status: 503 });
    for (let i = 0; i < 3; i++) await app.get(LoansService).executeLoan(13, loan);
    await kit.waitForDelivery({ userId: 13, count: 3 });
    const failing = await http().get('/inbox').set('x-user-id', '13').expect(200);
    expect(failing.body).toEqual([
      expect.objectContaining({
        title: 'Your webhook is failing',
        body: 'LOAN_EXECUTED webhook: 3 failed attempts in a row, last answer HTTP 503. Check your endpoint in the notification settings.',
      }),
    ]);

    kit.receiver.respondWith({ status: 204 });
    kit.advance(60_000);
    await kit.runScheduler();
    const inbox = await http().get('/inbox').set('x-user-id', '13').expect(200);
    expect(inbox.body.map((message: { title: string }) => message.title)).toEqual(['Your webhook is failing', 'Your webhook works again']);
    await http().get('/inbox').expect(401);
  });

  it('keeps its own tables and the notification tables in its one database', async () => {
    const rows: Array<{ name: string }> = await app
      .get(DataSource)
      .query('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name');
    expect(rows.map((row) => row.name)).toEqual(expect.arrayContaining(['loans', 'notification_preferences', 'webhook_deliveries']));
  });
});

describe('host app example', () => {
  it('refuses to start in production, saying it trusts x-user-id', () => {
    const env = { DATABASE_URL: 'mysql://root@127.0.0.1:3306/loans', WEBHOOK_SECRETS_KEY: randomBytes(32).toString('base64') };
    expect(() => hostConfigFromEnv({ ...env, NODE_ENV: 'production' })).toThrow(NOT_FOR_PRODUCTION);
    expect(NOT_FOR_PRODUCTION).toContain('trusts the x-user-id header');
    expect(hostConfigFromEnv({ ...env, NODE_ENV: 'development' }).databaseUrl).toBe(env.DATABASE_URL);
  });
});
