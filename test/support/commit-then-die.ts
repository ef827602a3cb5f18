/**
 * A host process that publishes inside its own transaction and is killed (SIGKILL, as kill -9) the moment the
 * transaction has committed, before the module can dispatch anything. Configured by environment like the service;
 * HOOK_URL is the user's webhook. Prints `{"eventId": …, "orderId": …}` before the commit.
 */
import { randomUUID } from 'node:crypto';
import { NestFactory } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppModule } from '../../src/service/app.module';
import { loadAppConfig } from '../../src/service/config/load-app-config';
import { NotificationChannel } from '../../src/notifications/catalog/event-catalog';
import { EventType } from '../../src/notifications/catalog/event-catalog';
import { Severity } from '../../src/notifications/delivery/wire/severity';
import { WebhookPublisher } from '../../src/notifications/delivery/publishing/webhook-publisher.service';
import { PreferencesService } from '../../src/notifications/preferences/preferences.service';

const USER_ID = 7;

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(AppModule.forConfig(loadAppConfig()), { logger: ['error'] });
  const dataSource = app.get(DataSource);
  await app.get(PreferencesService).upsert(USER_ID, {
    type: EventType.LOAN_EXECUTED,
    channel: NotificationChannel.WEBHOOK,
    enabled: true,
    webhookUrl: process.env.HOOK_URL!,
  });
  await dataSource.query('CREATE TABLE host_orders (id VARCHAR(36) PRIMARY KEY, amount INT NOT NULL)');
  // Registered after the module's own subscriber: it runs in the same broadcast, before any dispatch work got a turn.
  dataSource.subscribers.push({
    afterTransactionCommit: () => {
      process.kill(process.pid, 'SIGKILL');
    },
  });
  await dataSource.transaction(async (manager) => {
    const orderId = randomUUID();
    await manager.query('INSERT INTO host_orders (id, amount) VALUES (?, ?)', [orderId, 1000]);
    const { eventIds } = await app
      .get(WebhookPublisher)
      .publish(
        { userId: USER_ID, type: EventType.LOAN_EXECUTED, severity: Severity.INFO, title: 'Loan executed', body: '1000 USD' },
        { manager },
      );
    process.stdout.write(`${JSON.stringify({ eventId: eventIds[0], orderId })}\n`);
  });
  throw new Error('still alive after the commit');
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
