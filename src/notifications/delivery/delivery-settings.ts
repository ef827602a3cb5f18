import { SERVICE_VERSION } from '../../version';
import { positiveInteger } from '../common/values/positive-integer';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { type ProcessRole, processRole } from '../process-role';
import type { CircuitBreakerSettings } from './engine/circuit-breaker';
import { CLAIM_MODES, type ClaimMode } from './engine/claim-mode';
import { DEFAULT_WEBHOOK_TIMEOUT_MS } from './http/webhook-sender';

/** The resolved delivery settings of one module instance. */
export interface DeliverySettings {
  readonly concurrency: number;
  readonly perEndpointConcurrency: number;
  readonly circuitBreaker: CircuitBreakerSettings;
  readonly batchSize: number;
  readonly leaseMs: number;
  readonly timeoutMs: number;
  readonly shutdownGraceMs: number;
  readonly userAgent: string;
  readonly role: ProcessRole;
  /** How the claim keeps instances off one delivery on MySQL/MariaDB; unset: chosen by the server at start. */
  readonly claimMode?: ClaimMode;
  /** Where the other instances wake this one when they publish for a partition it owns; null: they leave it to its poll. */
  readonly wakeUrl: string | null;
}

export const DELIVERY_SETTINGS = Symbol('DELIVERY_SETTINGS');

/**
 * The largest difference between the clocks of two instances sharing a database that we tolerate. Lease and due times
 * come from each instance's clock: an instance whose clock runs ahead sees another's lease end early, by up to this much.
 * Run NTP (or similar) on every app server; a larger skew can send an attempt twice.
 */
export const MAX_CLOCK_SKEW_MS = 5_000;
/** Time an attempt's record gets to commit after its deadline. */
export const RECORD_BUDGET_MS = 2_000;
/**
 * An attempt starts only if its deadline, its record and the tolerated clock skew fit before its lease ends: then an
 * instance whose clock runs ahead by up to {@link MAX_CLOCK_SKEW_MS} never takes a lease that its holder still relies on.
 */
export const LEASE_MARGIN_MS = RECORD_BUDGET_MS + MAX_CLOCK_SKEW_MS;
export const DEFAULT_LEASE_MS = 60_000;
export const DEFAULT_PER_ENDPOINT_CONCURRENCY = 4;
export const DEFAULT_CIRCUIT_BREAKER: CircuitBreakerSettings = { failuresToOpen: 5, coolDownMs: 30_000 };

export function deliverySettings(options: NotificationsModuleOptions): DeliverySettings {
  const {
    concurrency = 64,
    perEndpointConcurrency = DEFAULT_PER_ENDPOINT_CONCURRENCY,
    circuitBreaker = {},
    batchSize = 200,
    leaseMs = DEFAULT_LEASE_MS,
    timeoutMs = DEFAULT_WEBHOOK_TIMEOUT_MS,
    shutdownGraceMs = 10_000,
    claimMode,
    wakeUrl,
  } = options.delivery ?? {};
  if (claimMode !== undefined && !CLAIM_MODES.includes(claimMode))
    throw new RangeError(`delivery.claimMode must be one of ${CLAIM_MODES.join(', ')}, got ${String(claimMode)}`);
  const { failuresToOpen = DEFAULT_CIRCUIT_BREAKER.failuresToOpen, coolDownMs = DEFAULT_CIRCUIT_BREAKER.coolDownMs } = circuitBreaker;
  if (!Number.isInteger(failuresToOpen) || failuresToOpen < 0)
    throw new RangeError(`delivery.circuitBreaker.failuresToOpen must be a whole number ≥ 0 (0 = never), got ${failuresToOpen}`);
  const role = processRole(options);
  if (leaseMs <= timeoutMs + LEASE_MARGIN_MS) {
    throw new RangeError(
      `delivery.leaseMs (${leaseMs}) must exceed delivery.timeoutMs (${timeoutMs}) by more than ${LEASE_MARGIN_MS} ms (record budget and tolerated clock skew)`,
    );
  }
  return {
    concurrency: positiveInteger('delivery.concurrency', concurrency),
    perEndpointConcurrency: positiveInteger('delivery.perEndpointConcurrency', perEndpointConcurrency),
    circuitBreaker: { failuresToOpen, coolDownMs: positiveInteger('delivery.circuitBreaker.coolDownMs', coolDownMs) },
    batchSize: positiveInteger('delivery.batchSize', batchSize),
    leaseMs: positiveInteger('delivery.leaseMs', leaseMs),
    timeoutMs: positiveInteger('delivery.timeoutMs', timeoutMs),
    shutdownGraceMs: positiveInteger('delivery.shutdownGraceMs', shutdownGraceMs),
    userAgent: `Service/${SERVICE_VERSION} (+${options.serviceSite ?? 'https://funding.example.com'})`,
    role,
    claimMode,
    wakeUrl: wakeUrlOf(wakeUrl, options),
  };
}

/** `delivery.wakeUrl`: an absolute http(s) URL, and the wake route it names is authenticated with `internalApiToken`. */
function wakeUrlOf(wakeUrl: string | undefined, options: NotificationsModuleOptions): string | null {
  if (wakeUrl === undefined) return null;
  let url: URL;
  try {
    url = new URL(wakeUrl);
  } catch {
    throw new RangeError(`delivery.wakeUrl must be an absolute http(s) URL, got ${JSON.stringify(wakeUrl)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RangeError(`delivery.wakeUrl must be an absolute http(s) URL, got ${JSON.stringify(wakeUrl)}`);
  if (!options.internalApiToken)
    throw new RangeError(
      'delivery.wakeUrl (DELIVERY_WAKE_URL) needs internalApiToken (INTERNAL_API_TOKEN): the other instances call the wake route with it',
    );
  return url.href;
}
