import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Module, type InjectionToken, type ModuleMetadata } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import * as library from '@funding/notification-webhooks';
import {
  DeliveryEvents,
  EventType,
  NotificationChannel,
  NotificationPreferences,
  NotificationsMetrics,
  NotificationsModule,
  RetentionService,
  SecretsReencryption,
  WebhookPublisher,
} from '@funding/notification-webhooks';
import { Clock } from '../../src/notifications/clock/clock';
import { DeliveryModule } from '../../src/notifications/delivery/delivery.module';
import { DeliveryLogRepository } from '../../src/notifications/delivery/delivery-log/delivery-log.repository';
import { DeliveryOutboxRepository } from '../../src/notifications/delivery/engine/delivery-outbox.repository';
import { OutboxEngine } from '../../src/notifications/delivery/engine/outbox-engine.service';
import { WebhookSender } from '../../src/notifications/delivery/http/webhook-sender';
import { NotificationsMetricsModule } from '../../src/notifications/metrics/notifications-metrics.module';
import { WebhookAutoDisable } from '../../src/notifications/auto-disable/webhook-auto-disable.service';
import { PreferencesService } from '../../src/notifications/preferences/preferences.service';
import { RetentionModule } from '../../src/notifications/retention/retention.module';
import { DeliveryScheduler } from '../../src/notifications/scheduler/delivery-scheduler.service';
import { SecretsModule } from '../../src/notifications/secrets/secrets.module';
import { SecretsService } from '../../src/notifications/secrets/secrets.service';
import { WebhookUrlPolicy } from '../../src/notifications/url-policy/webhook-url-policy';
import { inMemoryDatabase } from '../support/in-memory-database';

const PUBLIC = [WebhookPublisher, DeliveryEvents, NotificationPreferences, NotificationsMetrics, RetentionService, SecretsReencryption];
const INTERNAL = [
  OutboxEngine,
  DeliveryOutboxRepository,
  DeliveryLogRepository,
  WebhookSender,
  DeliveryScheduler,
  Clock,
  WebhookAutoDisable,
  PreferencesService,
  SecretsService,
  WebhookUrlPolicy,
];

const options = () => ({ jwtSecret: 'x'.repeat(32), encryptionKeys: [{ id: 'k', key: randomBytes(32) }] });

/** A provider of a host feature module that injects `tokens`, as a host's own service would. */
function hostFeatureInjecting(...tokens: InjectionToken[]) {
  @Injectable()
  class HostService {
    readonly injected: unknown[];
    constructor(...injected: unknown[]) {
      this.injected = injected;
    }
  }
  tokens.forEach((token, index) => Inject(token)(HostService, undefined, index));
  @Module({ providers: [HostService], exports: [HostService] })
  class HostFeatureModule {}
  return { HostService, HostFeatureModule };
}

async function compile(imports: ModuleMetadata['imports']): Promise<TestingModule> {
  return Test.createTestingModule({ imports: [inMemoryDatabase(), ScheduleModule.forRoot(), ...(imports ?? [])] })
    .setLogger({ log() {}, error() {}, warn() {} })
    .compile();
}

describe("NotificationsModule's public DI surface", () => {
  it('lets a host provider inject the host-facing classes, the very instances the module itself uses', async () => {
    const { HostService, HostFeatureModule } = hostFeatureInjecting(...PUBLIC);
    const app = await compile([NotificationsModule.forRoot(options()), HostFeatureModule]);
    try {
      const [publisher, events, preferences, metrics, retention, reencryption] = app.get(HostService).injected;
      const inside = <T>(module: object, type: new (...args: never[]) => T) => app.select(module as never).get(type, { strict: true });
      expect(publisher).toBe(inside(DeliveryModule, WebhookPublisher));
      expect(events).toBe(inside(DeliveryModule, DeliveryEvents));
      expect(metrics).toBe(inside(NotificationsMetricsModule, NotificationsMetrics));
      expect(retention).toBe(inside(RetentionModule, RetentionService));
      expect(reencryption).toBe(inside(SecretsModule, SecretsReencryption));
      expect(preferences).toBeInstanceOf(NotificationPreferences);
    } finally {
      await app.close();
    }
  });

  it.each(INTERNAL.map((type) => [type.name, type] as const))('refuses %s to a host provider', async (name, type) => {
    const { HostFeatureModule } = hostFeatureInjecting(type);
    await expect(compile([NotificationsModule.forRoot(options()), HostFeatureModule])).rejects.toThrow(
      new RegExp(`can't resolve dependencies of the HostService \\(\\?\\)[^]*${name}`),
    );
  });

  it('gives hosts the user-facing preferences API, which never hands out signing secrets after the first enable', async () => {
    const { HostService, HostFeatureModule } = hostFeatureInjecting(NotificationPreferences);
    const app = await compile([NotificationsModule.forRoot(options()), HostFeatureModule]);
    try {
      const [preferences] = app.get(HostService).injected as [NotificationPreferences];
      const enable = {
        type: EventType.LOAN_EXECUTED,
        channel: NotificationChannel.WEBHOOK,
        enabled: true,
        webhookUrl: 'https://hooks.example.com/a',
      };
      const first = await preferences.upsert(7, enable);
      expect(first.webhookSecret).toMatch(/^whsec_/);
      expect((await preferences.upsert(7, enable)).webhookSecret).toBeUndefined();
      expect(await preferences.list(7)).toEqual([
        expect.objectContaining({ type: 'LOAN_EXECUTED', enabled: true, hasWebhookSecret: true }),
      ]);
      expect(Object.keys(Object.getOwnPropertyDescriptors(NotificationPreferences.prototype)).sort()).toEqual([
        'constructor',
        'effective',
        'list',
        'rotateSecret',
        'upsert',
      ]);
    } finally {
      await app.close();
    }
  });

  it('exports from the package entry exactly the injectable classes a host can inject', () => {
    const injectables = Object.entries(library)
      .filter(([, value]) => typeof value === 'function' && Reflect.hasMetadata('__injectable__', value))
      .map(([name]) => name);
    expect(injectables.sort()).toEqual(PUBLIC.map((type) => type.name).sort());
  });

  describe.each([
    { method: 'forRoot', notifications: () => NotificationsModule.forRoot({ ...options(), isGlobal: false }) },
    { method: 'forRootAsync', notifications: () => NotificationsModule.forRootAsync({ useFactory: options, isGlobal: false }) },
  ])('with isGlobal: false in $method', ({ notifications }) => {
    const shared = () => {
      // The host's own module imports NotificationsModule once and re-exports it to the modules that import it.
      @Module({ imports: [notifications()], exports: [NotificationsModule] })
      class HostNotificationsModule {}
      return HostNotificationsModule;
    };

    it('serves the modules that import its importer', async () => {
      const HostNotificationsModule = shared();
      const { HostService } = hostFeatureInjecting(WebhookPublisher);
      @Module({ imports: [HostNotificationsModule], providers: [HostService] })
      class Feature {}
      const app = await compile([HostNotificationsModule, Feature]);
      try {
        expect(app.select(Feature).get(HostService, { strict: true }).injected[0]).toBeInstanceOf(WebhookPublisher);
      } finally {
        await app.close();
      }
    });

    it('is not visible to a module that does not import it', async () => {
      const { HostFeatureModule } = hostFeatureInjecting(WebhookPublisher);
      await expect(compile([shared(), HostFeatureModule])).rejects.toThrow(
        /can't resolve dependencies of the HostService \(\?\)[^]*WebhookPublisher/,
      );
    });
  });
});
