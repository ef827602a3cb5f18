import { SERVICE_VERSION } from '../../version';
import { positiveInteger } from '../common/positive-integer';
import type { NotificationsModuleOptions } from '../notifications-options.interface';

/** The resolved delivery settings of one module instance. */
export interface DeliverySettings {
  readonly concurrency: number;
  readonly batchSize: number;
  readonly leaseMs: number;
  readonly timeoutMs: number;
  readonly shutdownGraceMs: number;
  readonly userAgent: string;
}

export const DELIVERY_SETTINGS = Symbol('DELIVERY_SETTINGS');

/** An attempt starts only if it can finish, and be recorded, this long before its lease ends. */
export const LEASE_MARGIN_MS = 1_000;
export const DEFAULT_LEASE_MS = 60_000;
export const DEFAULT_TIMEOUT_MS = 5_000;

export function deliverySettings(options: NotificationsModuleOptions): DeliverySettings {
  const { concurrency = 64, batchSize = 200, leaseMs = DEFAULT_LEASE_MS, timeoutMs = DEFAULT_TIMEOUT_MS, shutdownGraceMs = 10_000 } = options.delivery ?? {};
  if (leaseMs <= timeoutMs + LEASE_MARGIN_MS) {
    throw new RangeError(`delivery.leaseMs (${leaseMs}) must exceed delivery.timeoutMs (${timeoutMs}) by more than ${LEASE_MARGIN_MS} ms`);
  }
  return {
    concurrency: positiveInteger('delivery.concurrency', concurrency),
    batchSize: positiveInteger('delivery.batchSize', batchSize),
    leaseMs: positiveInteger('delivery.leaseMs', leaseMs),
    timeoutMs: positiveInteger('delivery.timeoutMs', timeoutMs),
    shutdownGraceMs: positiveInteger('delivery.shutdownGraceMs', shutdownGraceMs),
    userAgent: `Service/${SERVICE_VERSION} (+${options.serviceSite ?? 'https://funding.example.com'})`,
  };
}
