import { positiveInteger } from '../../../common/values/positive-integer';
import type { NotificationsModuleOptions } from '../../../notifications-options.interface';

const HOUR_MS = 60 * 60 * 1000;

/** How long a publish's `Idempotency-Key` answers its retries by default (Stripe keeps keys 24 h, Svix 12 h). */
export const DEFAULT_IDEMPOTENCY_KEY_HOURS = 24;

export const IDEMPOTENCY_WINDOW_MS = Symbol('IDEMPOTENCY_WINDOW_MS');

/** `retention.idempotencyKeyHours` in ms, checked at start: the publisher honours keys that long, retention then deletes them. */
export function idempotencyWindowMs(options: NotificationsModuleOptions): number {
  const hours = options.retention?.idempotencyKeyHours ?? DEFAULT_IDEMPOTENCY_KEY_HOURS;
  return positiveInteger('retention.idempotencyKeyHours', hours) * HOUR_MS;
}
