import type { NotificationsModuleOptions } from '../notifications-options.interface';

export const DEFAULT_FAILING_AFTER_ATTEMPTS = 3;

/** Failed attempts in a row after which a webhook is FAILING; refuses a value that is not a whole number ≥ 1. */
export function failingAfterAttempts(options: NotificationsModuleOptions): number {
  const value = options.healthFailingAfterAttempts ?? DEFAULT_FAILING_AFTER_ATTEMPTS;
  if (!Number.isInteger(value) || value < 1) {
    throw new Error(`healthFailingAfterAttempts must be a whole number ≥ 1, got ${value}`);
  }
  return value;
}
