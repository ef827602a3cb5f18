import { randomBytes } from 'node:crypto';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { NotificationsModule } from '../../src';
import { inMemoryDatabase } from '../support/in-memory-database';

const options = () => ({ jwtSecret: 'x'.repeat(32), encryptionKeys: [{ id: 'k', key: randomBytes(32) }] });

async function start(imports: NonNullable<Parameters<typeof Module>[0]>['imports']): Promise<void> {
  const app = await NestFactory.create({ imports }, { logger: false, abortOnError: false });
  try {
    await app.init();
  } finally {
    await app.close();
  }
}

describe('NotificationsModule set-up mistakes', () => {
  it('refuses to start when imported twice, saying to import it once in the root module', async () => {
    @Module({ imports: [NotificationsModule.forRoot(options())] })
    class LoansModule {}

    await expect(
      start([inMemoryDatabase(), ScheduleModule.forRoot(), NotificationsModule.forRoot(options()), LoansModule]),
    ).rejects.toThrow(/NotificationsModule is imported 2 times .*Import it once, in your root module/);
  });

  it('refuses to start without ScheduleModule.forRoot(), saying to add it', async () => {
    await expect(start([inMemoryDatabase(), NotificationsModule.forRoot(options())])).rejects.toThrow(
      /add ScheduleModule\.forRoot\(\) \(from '@nestjs\/schedule'\) to the imports of your root module/,
    );
  });

  it('starts when imported once next to ScheduleModule.forRoot()', async () => {
    await expect(start([inMemoryDatabase(), ScheduleModule.forRoot(), NotificationsModule.forRoot(options())])).resolves.toBeUndefined();
  });
});
