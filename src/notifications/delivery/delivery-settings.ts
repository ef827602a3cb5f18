import { SERVICE_VERSION } from '../../version';
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

export function deliverySettings(options: NotificationsModuleOptions): DeliverySettings {
  const tuning = options.delivery ?? {};
  return {
    concurrency: tuning.concurrency ?? 64,
    batchSize: tuning.batchSize ?? 200,
    leaseMs: tuning.leaseMs ?? 60_000,
    timeoutMs: tuning.timeoutMs ?? 5_000,
    shutdownGraceMs: tuning.shutdownGraceMs ?? 10_000,
    userAgent: `Service/${SERVICE_VERSION} (+${options.serviceSite ?? 'https://funding.example.com'})`,
  };
}
