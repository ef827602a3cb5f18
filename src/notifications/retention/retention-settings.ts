import { positiveInteger } from '../common/values/positive-integer';
import type { NotificationsModuleOptions } from '../notifications-options.interface';

const DAY_MS = 24 * 60 * 60 * 1000;

/** The resolved retention of one module instance. */
export interface RetentionSettings {
  /** How long DELIVERED and CANCELLED deliveries are kept, in ms. */
  readonly deliveredMs: number;
  /** How long FAILED deliveries are kept, in ms. */
  readonly failedMs: number;
  readonly batchSize: number;
}

export const RETENTION_SETTINGS = Symbol('RETENTION_SETTINGS');

export const DEFAULT_RETENTION = { deliveredDays: 30, failedDays: 90, batchSize: 1000 } as const;

export function retentionSettings(options: NotificationsModuleOptions): RetentionSettings {
  const {
    deliveredDays = DEFAULT_RETENTION.deliveredDays,
    failedDays = DEFAULT_RETENTION.failedDays,
    batchSize = DEFAULT_RETENTION.batchSize,
  } = options.retention ?? {};
  return {
    deliveredMs: positiveInteger('retention.deliveredDays', deliveredDays) * DAY_MS,
    failedMs: positiveInteger('retention.failedDays', failedDays) * DAY_MS,
    batchSize: positiveInteger('retention.batchSize', batchSize),
  };
}
