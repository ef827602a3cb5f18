import type { NotificationsModuleOptions } from '../notifications-options.interface';

/** Failed deliveries in a row that disable a webhook; 0 = never. Refuses a value that is not a whole number ≥ 0. */
export function autoDisableAfter(options: NotificationsModuleOptions): number {
  const value = options.autoDisableAfterFailures ?? 0;
  if (!Number.isInteger(value) || value < 0) {
    throw new Error(`autoDisableAfterFailures must be a whole number ≥ 0 (0 = never), got ${value}`);
  }
  return value;
}
