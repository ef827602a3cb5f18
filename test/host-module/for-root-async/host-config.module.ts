import { randomBytes } from 'node:crypto';
import { type DynamicModule, Injectable, Module } from '@nestjs/common';
import type { NotificationsModuleOptions, NotificationsOptionsFactory } from '@funding/notification-webhooks';
import { notificationsTestOptions, type TestClock, type TestReceiver } from '@funding/notification-webhooks/testing';

export const JWT_SECRET = 'for-root-async-jwt-secret-0123456789abcdef';

/** What a host's own configuration would hold; here, the test's receiver and clock. */
export class HostConfig {
  readonly encryptionKey = randomBytes(32);
  constructor(readonly wiring: { receiver: TestReceiver; clock: TestClock }) {}

  notificationsOptions(): NotificationsModuleOptions {
    return { jwtSecret: JWT_SECRET, encryptionKeys: [{ id: 'host', key: this.encryptionKey }], ...notificationsTestOptions(this.wiring) };
  }
}

/** The options factory of the `useClass` and `useExisting` variants. */
@Injectable()
export class NotificationsConfig implements NotificationsOptionsFactory {
  constructor(private readonly host: HostConfig) {}

  createNotificationsOptions(): Promise<NotificationsModuleOptions> {
    return Promise.resolve(this.host.notificationsOptions());
  }
}

/** The host's configuration module: its config, and an options factory built from it. */
@Module({})
export class HostConfigModule {
  static register(config: HostConfig): DynamicModule {
    return {
      module: HostConfigModule,
      providers: [{ provide: HostConfig, useValue: config }, NotificationsConfig],
      exports: [HostConfig, NotificationsConfig],
    };
  }
}
