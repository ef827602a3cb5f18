/**
 * Testing kit of `@funding/notification-webhooks`: a loopback HTTPS receiver, a test clock, and a one-call boot of
 * NotificationsModule wired to them. Import from `@funding/notification-webhooks/testing` in tests only.
 */
export {
  bootTestNotifications,
  TEST_JWT_SECRET,
  type BootTestNotificationsOptions,
  type TestNotifications,
} from './boot-test-notifications';
export { attachNotificationsTestKit, type NotificationsTestKit } from './notifications-test-kit';
export { notificationsTestOptions, type NotificationsTestOptions } from './notifications-test-options';
export { ReceivedRequest, type DeliveryFilter } from './received-request';
export type { ReceiverBehaviour } from './receiver-behaviour';
export { RECEIVER_HOSTNAME } from './test-certificate';
export { TestClock } from './test-clock';
export { startTestReceiver, type BehaviourScope, type ReceiverAnswer, type TestReceiver, type WaitForDelivery } from './test-receiver';
