import { html, nothing, type TemplateResult } from 'lit';
import type { EventType, WebhookHealth } from './api';
import { humanize, time } from './labels';

/** What "Re-enable and recover" did for one webhook, or why it could not: shown next to the button. */
export interface RecoveryOutcome {
  readonly ok: boolean;
  readonly text: string;
}

export interface HealthViewModel {
  readonly health: WebhookHealth | undefined;
  readonly recovery: RecoveryOutcome | undefined;
  readonly busy: boolean;
}

const BADGES: Record<WebhookHealth['state'], string> = {
  HEALTHY: 'Healthy',
  FAILING: 'Failing',
  CIRCUIT_OPEN: 'Circuit open',
  DISABLED: 'Disabled',
  OFF: 'Off',
};

/**
 * One saved webhook's health: a badge (its text says the state; the colour only repeats it) and one line with the
 * figures, then, while the service keeps the webhook off, "Re-enable and recover" and what it did.
 */
export function healthView(type: EventType, model: HealthViewModel, reenable: (type: EventType) => void): TemplateResult {
  const { health, recovery } = model;
  const label = humanize(type);
  return html`
    <div class="health">
      ${
        health
          ? html`<p>
              <span class="badge badge-${health.state.toLowerCase().replace('_', '-')}"
                ><span class="visually-hidden">Health of the webhook for ${label}: </span>${BADGES[health.state]}</span
              >
              ${healthLine(health)}
            </p>`
          : nothing
      }
      ${health && orderedWaitLine(health) ? html`<p class="ordered-wait">${orderedWaitLine(health)}</p>` : nothing}
      ${
        health?.state === 'DISABLED'
          ? html`<button type="button" ?disabled=${model.busy} @click=${() => reenable(type)}>
              Re-enable and recover<span class="visually-hidden"> the webhook for ${label}</span>
            </button>`
          : nothing
      }
      ${
        recovery
          ? html`<p class=${recovery.ok ? 'success' : 'field-error'} role=${recovery.ok ? 'status' : 'alert'}>${recovery.text}</p>`
          : nothing
      }
    </div>
  `;
}

/** "Failing since …, 4 failed attempts in a row, last: HTTP 503", "Circuit open until …, 12 deliveries waiting", … */
export function healthLine(health: WebhookHealth): string {
  switch (health.state) {
    case 'FAILING':
      return [
        health.failingSince ? `Failing since ${time(health.failingSince)}` : 'Failing',
        count(health.failedAttemptsInRow, 'failed attempt in a row', 'failed attempts in a row'),
        ...(health.lastAttempt ? [`last: ${lastAttempt(health.lastAttempt)}`] : []),
      ].join(', ');
    case 'CIRCUIT_OPEN':
      return [
        health.circuitOpenUntil ? `Circuit open until ${time(health.circuitOpenUntil)}` : 'Circuit open',
        count(health.waitingDeliveries, 'delivery waiting', 'deliveries waiting'),
      ].join(', ');
    case 'DISABLED':
      return `Disabled by the service: ${health.disabledReason ?? 'too many failed deliveries'}`;
    case 'OFF':
      return 'Turned off: nothing is sent to it';
    case 'HEALTHY':
      return [
        health.lastSuccessAt ? `Healthy, last delivered ${time(health.lastSuccessAt)}` : 'Healthy, nothing delivered yet',
        ...(health.failedAttemptsInRow > 0 ? [count(health.failedAttemptsInRow, 'failed attempt since', 'failed attempts since')] : []),
      ].join(', ');
  }
}

/**
 * With ordered delivery on and deliveries waiting behind the one being retried: how many, behind which (its number in
 * the log, its sequence) and how it is doing, e.g. "Ordered delivery: 2 deliveries waiting behind delivery #41 (Rate
 * spike, sequence 7; 3 attempts so far; last: receiver answered 503; next try …)". Undefined when nothing waits.
 */
export function orderedWaitLine(health: WebhookHealth): string | undefined {
  const head = health.orderedHead;
  if (!health.orderedDelivery || !head || health.waitingBehind === 0) return undefined;
  const about = [
    humanize(head.type) + (head.sequence === null ? '' : `, sequence ${head.sequence}`),
    count(head.attemptCount, 'attempt so far', 'attempts so far'),
    ...(head.lastError ? [`last: ${head.lastError}`] : []),
    ...(head.nextAttemptAt ? [`next try ${time(head.nextAttemptAt)}`] : []),
  ];
  const waiting = count(health.waitingBehind, 'delivery waiting', 'deliveries waiting');
  return `Ordered delivery: ${waiting} behind delivery #${head.deliveryId} (${about.join('; ')})`;
}

function lastAttempt(attempt: NonNullable<WebhookHealth['lastAttempt']>): string {
  if (attempt.statusCode !== null) return `HTTP ${attempt.statusCode}`;
  return attempt.error ?? attempt.outcome.replace('_', ' ');
}

function count(n: number, one: string, many: string): string {
  return `${n.toLocaleString('en-GB')} ${n === 1 ? one : many}`;
}
