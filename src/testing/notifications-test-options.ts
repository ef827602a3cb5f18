import type { NotificationsModuleOptions } from '../notifications/notifications-options.interface';
import type { HostResolver } from '../notifications/url-policy/webhook-url-policy';
import { RECEIVER_HOSTNAME } from './test-certificate';
import type { TestClock } from './test-clock';
import type { TestReceiver } from './test-receiver';

/** The module options a test adds so deliveries reach the {@link TestReceiver} on loopback. */
export type NotificationsTestOptions = Required<Pick<NotificationsModuleOptions, 'allowedCidrs' | 'extraCaPem' | 'resolver' | 'clock'>>;

/**
 * Options that wire the module to a test receiver: loopback allowed, the receiver's certificate trusted,
 * `receiver.test` resolving to 127.0.0.1 and every other name to nothing (tests never touch real DNS), and the test clock.
 * Spread them into your own `NotificationsModule.forRootAsync` factory when you boot your whole app in a test.
 */
export function notificationsTestOptions(wiring: { receiver: TestReceiver; clock: TestClock }): NotificationsTestOptions {
  const resolver: HostResolver = async (hostname) => (hostname === RECEIVER_HOSTNAME ? ['127.0.0.1'] : []);
  return { allowedCidrs: ['127.0.0.0/8'], extraCaPem: wiring.receiver.caPem, resolver, clock: wiring.clock };
}
