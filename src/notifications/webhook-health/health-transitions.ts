import type { EventType } from '../catalog/event-catalog';
import type { WebhookHealthChange, WebhookHealthChanged, WebhookHealthState } from '../delivery/events/delivery-events.service';
import type { AttemptOutcome } from '../delivery/http/attempt-result';
import { HEALTH_ERROR_LENGTH } from './webhook-health.entity';

/** What a health row holds, without its key and `updatedAt`. Times are epoch ms. */
export interface HealthFacts {
  readonly failedAttemptsInRow: number;
  readonly failingSince: number | null;
  readonly lastAttemptAt: number | null;
  readonly lastOutcome: string | null;
  readonly lastStatusCode: number | null;
  readonly lastError: string | null;
  readonly lastSuccessAt: number | null;
  readonly circuitOpenUntil: number | null;
  readonly disabledAt: number | null;
}

export const NO_HEALTH_FACTS: HealthFacts = {
  failedAttemptsInRow: 0,
  failingSince: null,
  lastAttemptAt: null,
  lastOutcome: null,
  lastStatusCode: null,
  lastError: null,
  lastSuccessAt: null,
  circuitOpenUntil: null,
  disabledAt: null,
};

/** One thing seen about a webhook: an attempt made (or refused before a request), one skipped for an open circuit, or auto-disable. */
export type HealthObservation =
  | {
      readonly kind: 'attempt';
      readonly at: number;
      readonly outcome: AttemptOutcome;
      readonly statusCode: number | null;
      readonly error: string | null;
    }
  | { readonly kind: 'circuit_open'; readonly at: number; readonly until: number }
  | { readonly kind: 'disabled'; readonly at: number }
  | { readonly kind: 'url_changed'; readonly at: number };

/**
 * The state changes report, from the stored facts: the circuit counts as open from a skipped attempt until a 2xx closes
 * it (past its cool-down the next attempt is its probe); FAILING from `failingAfter` failed attempts in a row.
 */
export function storedState(facts: HealthFacts, failingAfter: number): Exclude<WebhookHealthState, 'DISABLED' | 'OFF'> {
  if (facts.circuitOpenUntil !== null) return 'CIRCUIT_OPEN';
  if (facts.failedAttemptsInRow >= failingAfter) return 'FAILING';
  return 'HEALTHY';
}

/**
 * One observation applied to the facts. Newer observations win: an attempt or a skip that started before the last 2xx
 * is ignored (it cannot be part of the run of failures after it), and the `last*` fields move only forwards in time, so
 * instances that record out of order still agree. Skipped attempts are not failures of the receiver: they only set
 * `circuitOpenUntil`.
 */
export function observe(facts: HealthFacts, observation: HealthObservation): HealthFacts {
  // A new URL starts healthy: the failures, the circuit and the last attempt were the old URL's. Auto-disable stays.
  if (observation.kind === 'url_changed') return { ...NO_HEALTH_FACTS, disabledAt: facts.disabledAt };
  if (observation.kind === 'disabled') return { ...facts, disabledAt: Math.max(facts.disabledAt ?? 0, observation.at) };
  if (facts.lastSuccessAt !== null && observation.at < facts.lastSuccessAt) return facts;
  if (observation.kind === 'circuit_open') {
    return { ...facts, circuitOpenUntil: Math.max(facts.circuitOpenUntil ?? 0, observation.until) };
  }
  const newest = facts.lastAttemptAt === null || observation.at >= facts.lastAttemptAt;
  const last = newest
    ? {
        lastAttemptAt: observation.at,
        lastOutcome: observation.outcome,
        lastStatusCode: observation.statusCode,
        lastError: observation.error === null ? null : observation.error.slice(0, HEALTH_ERROR_LENGTH),
      }
    : {};
  if (observation.outcome === 'success') {
    // A 2xx older than a failure already counted leaves that run standing: only the failures after it are in a row.
    if (!newest) return { ...facts, lastSuccessAt: observation.at };
    return { ...facts, ...last, failedAttemptsInRow: 0, failingSince: null, lastSuccessAt: observation.at, circuitOpenUntil: null };
  }
  return {
    ...facts,
    ...last,
    failedAttemptsInRow: facts.failedAttemptsInRow + 1,
    failingSince: Math.min(facts.failingSince ?? observation.at, observation.at),
  };
}

/** The change one observation made, if any. */
function changeOf(from: WebhookHealthState, to: WebhookHealthState, observation: HealthObservation): WebhookHealthChange | null {
  if (observation.kind === 'disabled') return 'disabled';
  if (from === to) return null;
  if (observation.kind === 'url_changed') return 'recovered';
  if (to === 'CIRCUIT_OPEN') return 'circuit_opened';
  if (to === 'FAILING') return from === 'HEALTHY' ? 'became_failing' : null;
  return from === 'CIRCUIT_OPEN' ? 'circuit_closed' : 'recovered';
}

/**
 * Applies a webhook's observations (in the order of their times) to its stored facts: the new facts, and each change
 * they made, in order (a batch that fails three times and then succeeds reports both changes).
 */
export function applyObservations(
  key: { userId: number; type: EventType },
  facts: HealthFacts,
  observations: readonly HealthObservation[],
  failingAfter: number,
): { facts: HealthFacts; changes: WebhookHealthChanged[] } {
  const changes: WebhookHealthChanged[] = [];
  let current = facts;
  for (const observation of [...observations].sort((a, b) => a.at - b.at)) {
    const from = storedState(current, failingAfter);
    const next = observe(current, observation);
    const to = observation.kind === 'disabled' ? 'DISABLED' : storedState(next, failingAfter);
    const change = changeOf(from, to, observation);
    current = next;
    if (change === null) continue;
    changes.push({
      ...key,
      change,
      from,
      to,
      at: observation.at,
      failedAttemptsInRow: next.failedAttemptsInRow,
      failingSince: next.failingSince,
      circuitOpenUntil: next.circuitOpenUntil,
      lastStatusCode: next.lastStatusCode,
      lastError: next.lastError,
    });
  }
  return { facts: current, changes };
}
