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

  describe('validates its options as the standalone service validates its environment', () => {
    const boot = (overrides: object) =>
      start([inMemoryDatabase(), ScheduleModule.forRoot(), NotificationsModule.forRoot({ ...options(), ...overrides })]);
    const bootAsync = (overrides: object) =>
      start([
        inMemoryDatabase(),
        ScheduleModule.forRoot(),
        NotificationsModule.forRootAsync({ useFactory: async () => ({ ...options(), ...overrides }) }),
      ]);
    const production = { production: true, jwtIssuer: 'https://funding.example.com', jwtAudience: 'notification-settings' };

    it.each([
      ['a jwtSecret under 32 characters', { jwtSecret: 'short-secret' }, 'jwtSecret must be at least 32 characters'],
      ['an internalApiToken under 32 characters', { internalApiToken: 'short-token' }, 'internalApiToken must be at least 32 characters'],
      ['an allowedCidrs entry that is a host name', { allowedCidrs: ['localhost'] }, 'allowedCidrs must list IP ranges'],
      [
        'in production, allowedCidrs reaching private addresses without the acknowledgement',
        { ...production, allowedCidrs: ['10.0.0.0/8'] },
        'allowedCidrs lets webhooks reach non-public addresses (10.0.0.0/8',
      ],
      ['in production, a jwtSecret without jwtIssuer', { ...production, jwtIssuer: undefined }, 'jwtIssuer is required in production'],
      [
        'in production, a jwtSecret without jwtAudience',
        { ...production, jwtAudience: undefined },
        'jwtAudience is required in production',
      ],
    ])('refuses to start with %s, naming the option (forRoot and forRootAsync)', async (_, overrides, message) => {
      await expect(boot(overrides)).rejects.toThrow(`Invalid NotificationsModule options:\n  - ${message}`);
      await expect(bootAsync(overrides)).rejects.toThrow(`Invalid NotificationsModule options:\n  - ${message}`);
    });

    it('starts in production with the acknowledgement, and outside production without it', async () => {
      const privateRanges = { allowedCidrs: ['10.0.0.0/8'] };
      await expect(
        boot({ ...production, ...privateRanges, allowPrivateAddressesInProduction: 'i-understand-the-ssrf-risk' }),
      ).resolves.toBeUndefined();
      await expect(boot({ ...privateRanges, production: false })).resolves.toBeUndefined();
      await expect(boot({ ...production, allowedCidrs: ['8.8.8.0/24'] })).resolves.toBeUndefined();
    });
  });
});
