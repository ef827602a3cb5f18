import {
  attachNotificationsTestKit,
  notificationsTestOptions,
  type NotificationsTestKit,
  startTestReceiver,
  TestClock,
} from '@funding/notification-webhooks/testing';
import type { Test } from 'supertest';
import type { NotificationsModuleOptions } from '../../src/notifications/notifications-options.interface';
import { startTestApp, type TestApp, type TestServiceOptions } from './test-app';
import type { TestDatabaseKind } from './test-databases';

export const INTERNAL_API_TOKEN = 'internal-token-0123456789abcdef0123456789';
export const INTERNAL_EVENTS_PATH = '/api/v1/internal/notifications/events';

/** The standalone app driven by the testing kit: its own test receiver and test clock, the internal endpoint open. */
export interface TestAppWithKit extends TestApp, NotificationsTestKit {
  /** POSTs one event, or `{ events: [...] }`, to the internal events endpoint with {@link INTERNAL_API_TOKEN}. */
  publish(body: object): Test;
}

/**
 * {@link startTestApp} wired by `notificationsTestOptions` to a new receiver and clock, with the kit attached.
 * `overrides` go over the kit's options (e.g. `allowedCidrs: []`); `close()` also closes the receiver.
 */
export async function startTestAppWithKit(
  kind: TestDatabaseKind,
  overrides: Partial<NotificationsModuleOptions> = {},
  service: TestServiceOptions = {},
): Promise<TestAppWithKit> {
  const receiver = await startTestReceiver();
  const clock = new TestClock();
  try {
    const t = await startTestApp(
      kind,
      { ...notificationsTestOptions({ receiver, clock }), internalApiToken: INTERNAL_API_TOKEN, ...overrides },
      service,
    );
    return {
      ...t,
      ...attachNotificationsTestKit(t.app, { receiver, clock }),
      publish: (body) => t.http().post(INTERNAL_EVENTS_PATH).set('Authorization', `Bearer ${INTERNAL_API_TOKEN}`).send(body),
      async close() {
        await t.close();
        await receiver.close();
      },
    };
  } catch (error) {
    await receiver.close();
    throw error;
  }
}
