import { html, nothing, type TemplateResult } from 'lit';
import { live } from 'lit/directives/live.js';
import type { ApiFailure, EffectiveRow, EventType, SignatureScheme, TestSendResult, WebhookEventType, WebhookHealth } from './api';
import { disabledReasonOf } from './disabled-reason';
import { healthView, type RecoveryOutcome } from './health-view';
import { duration, humanize } from './labels';

/** What the user typed for one type's webhook, not yet saved. */
export interface WebhookDraft {
  enabled: boolean;
  url: string;
}

export interface PreferencesViewModel {
  readonly rows: readonly EffectiveRow[];
  readonly drafts: Readonly<Record<string, WebhookDraft>>;
  readonly fieldErrors: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly testResults: Readonly<Record<string, TestSendResult | ApiFailure>>;
  /** Each saved webhook's health, by type (absent until loaded, or for a type without a saved webhook). */
  readonly health: Readonly<Record<string, WebhookHealth>>;
  readonly recoveries: Readonly<Record<string, RecoveryOutcome>>;
  readonly recovering: ReadonlySet<string>;
}

export interface PreferencesActions {
  edit(type: EventType, draft: WebhookDraft): void;
  save(type: EventType): void;
  sendTest(type: WebhookEventType): void;
  rotateSecret(type: WebhookEventType): void;
  setSignatureSchemes(type: EventType, schemes: SignatureScheme[]): void;
  setOrderedDelivery(type: EventType, on: boolean): void;
  reenableAndRecover(type: EventType): void;
}

interface TypeRows {
  readonly type: EventType;
  readonly group: string;
  readonly byChannel: Partial<Record<EffectiveRow['channel'], EffectiveRow>>;
}

/** The effective preferences, one table per event group; only the types whose rows include WEBHOOK get a toggle. */
export function preferencesView(model: PreferencesViewModel, actions: PreferencesActions): TemplateResult {
  const groups = new Map<string, TypeRows[]>();
  for (const t of typesOf(model.rows)) groups.set(t.group, [...(groups.get(t.group) ?? []), t]);
  return html`${[...groups].map(
    ([group, types]) => html`
      <section class="group" aria-labelledby="group-${group}">
        <h2 id="group-${group}">${humanize(group)}</h2>
        <table class="preferences">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">In-app</th>
              <th scope="col">Email</th>
              <th scope="col">Webhook</th>
            </tr>
          </thead>
          <tbody>
            ${types.map((t) => typeRow(t, model, actions))}
          </tbody>
        </table>
      </section>
    `,
  )}`;
}

function typesOf(rows: readonly EffectiveRow[]): TypeRows[] {
  const byType = new Map<EventType, TypeRows>();
  for (const row of rows) {
    const entry = byType.get(row.type) ?? { type: row.type, group: row.group, byChannel: {} };
    entry.byChannel[row.channel] = row;
    byType.set(row.type, entry);
  }
  return [...byType.values()];
}

function typeRow(t: TypeRows, model: PreferencesViewModel, actions: PreferencesActions): TemplateResult {
  return html`
    <tr>
      <th scope="row">${humanize(t.type)}<span class="code">${t.type}</span></th>
      <td>${channelState(t.byChannel.IN_APP)}</td>
      <td>${channelState(t.byChannel.EMAIL)}</td>
      <td>
        ${t.byChannel.WEBHOOK ? webhookCell(t.type, t.byChannel.WEBHOOK, model, actions) : html`<span class="muted">Not offered</span>`}
      </td>
    </tr>
  `;
}

function channelState(row: EffectiveRow | undefined): TemplateResult {
  if (!row) return html`<span class="muted">—</span>`;
  return html`${row.enabled ? 'On' : 'Off'} <span class="muted">${row.source === 'DEFAULT' ? '(default)' : '(your choice)'}</span>`;
}

function webhookCell(type: EventType, row: EffectiveRow, model: PreferencesViewModel, actions: PreferencesActions): TemplateResult {
  const draft = model.drafts[type] ?? { enabled: row.enabled, url: row.webhookUrl ?? '' };
  const errors = model.fieldErrors[type] ?? {};
  const urlError = errors.webhookUrl;
  const otherErrors = Object.entries(errors).filter(([field]) => field !== 'webhookUrl');
  const health = model.health[type];
  const recovery = model.recoveries[type];
  // The health line says why the service turned it off, when health is loaded.
  const reason = health?.state === 'DISABLED' ? undefined : disabledReasonOf(row);
  const id = (part: string) => `${type}-${part}`;
  return html`
    <form
      class="webhook"
      @submit=${(e: Event) => {
        e.preventDefault();
        actions.save(type);
      }}
    >
      <label class="switch">
        <input
          type="checkbox"
          role="switch"
          .checked=${draft.enabled}
          @change=${(e: Event) => actions.edit(type, { ...draft, enabled: (e.target as HTMLInputElement).checked })}
        />
        Webhook<span class="visually-hidden"> for ${humanize(type)}</span>
      </label>
      <label for=${id('url')}>URL<span class="visually-hidden"> of the webhook for ${humanize(type)}</span></label>
      <input
        id=${id('url')}
        type="url"
        inputmode="url"
        placeholder="https://hooks.example.com/funding"
        .value=${draft.url}
        aria-invalid=${urlError ? 'true' : 'false'}
        aria-describedby=${urlError ? id('url-error') : nothing}
        @input=${(e: Event) => actions.edit(type, { ...draft, url: (e.target as HTMLInputElement).value })}
      />
      <button type="submit">Save<span class="visually-hidden"> webhook for ${humanize(type)}</span></button>
      ${urlError ? html`<p class="field-error" id=${id('url-error')}>${urlError}</p>` : nothing}
      ${otherErrors.map(([field, message]) => html`<p class="field-error">${field}: ${message}</p>`)}
      ${
        reason
          ? html`<p class="warning">
              Turned off by the service: ${reason.code ? html`<code>${reason.code}</code>` : nothing} ${reason.text ?? ''}
            </p>`
          : nothing
      }
      ${
        // A WEBHOOK row exists only for a type that can use a webhook (the document says so; its types cannot).
        row.enabled && row.hasWebhookSecret ? savedWebhookTools(type as WebhookEventType, model.testResults[type], actions) : nothing
      }
    </form>
    ${row.enabled && row.hasWebhookSecret ? signatureView(type, row, actions) : nothing}
    ${row.enabled && row.hasWebhookSecret ? orderingView(type, row, actions) : nothing}
    ${
      health || recovery
        ? healthView(type, { health, recovery, busy: model.recovering.has(type) }, (t) => actions.reenableAndRecover(t))
        : nothing
    }
  `;
}

function savedWebhookTools(
  type: WebhookEventType,
  result: TestSendResult | ApiFailure | undefined,
  actions: PreferencesActions,
): TemplateResult {
  return html`
    <div class="tools">
      <span class="muted">Signing secret set</span>
      <button type="button" class="secondary" @click=${() => actions.sendTest(type)}>
        Send test<span class="visually-hidden"> event for ${humanize(type)}</span>
      </button>
      <button type="button" class="secondary" @click=${() => actions.rotateSecret(type)}>
        Rotate secret<span class="visually-hidden"> for ${humanize(type)}</span>
      </button>
    </div>
    ${result ? testResultView(result) : nothing}
  `;
}

const SCHEME_CHOICES: readonly { readonly value: string; readonly label: string }[] = [
  { value: 'hmac', label: 'HMAC, with the signing secret' },
  { value: 'ed25519', label: 'Ed25519, verified with a public key' },
  { value: 'hmac,ed25519', label: 'Both' },
];

/** How the webhook's deliveries are signed, and the public key a receiver verifies Ed25519 signatures with. */
function signatureView(type: EventType, row: EffectiveRow, actions: PreferencesActions): TemplateResult {
  const id = (part: string) => `${type}-${part}`;
  const current = (row.signatureSchemes ?? ['hmac']).join(',');
  return html`
    <div class="signature">
      <label for=${id('schemes')}>Signature<span class="visually-hidden"> of the webhook for ${humanize(type)}</span></label>
      <select
        id=${id('schemes')}
        @change=${(e: Event) => actions.setSignatureSchemes(type, (e.target as HTMLSelectElement).value.split(',') as SignatureScheme[])}
      >
        ${SCHEME_CHOICES.map((choice) => html`<option value=${choice.value} ?selected=${choice.value === current}>${choice.label}</option>`)}
      </select>
      ${
        row.signingPublicKey
          ? html`<p class="public-key">
              Public key<span class="visually-hidden"> for ${humanize(type)}</span>: <code>${row.signingPublicKey}</code>
              <span class="muted">(not a secret: receivers verify Ed25519 signatures with it)</span>
            </p>`
          : nothing
      }
    </div>
  `;
}

/**
 * The "Ordered delivery" switch of a saved webhook, and what it does. The service keeps it per URL: the user's other
 * types that post to the same URL follow it (the rows show it after the reload that follows the save).
 */
function orderingView(type: EventType, row: EffectiveRow, actions: PreferencesActions): TemplateResult {
  const help = `${type}-ordered-help`;
  // live(): after a refused change the reload brings the same value back, and the switch must show it again.
  return html`
    <div class="ordering">
      <label class="switch">
        <input
          type="checkbox"
          role="switch"
          .checked=${live(row.orderedDelivery ?? false)}
          aria-describedby=${help}
          @change=${(e: Event) => actions.setOrderedDelivery(type, (e.target as HTMLInputElement).checked)}
        />
        Ordered delivery<span class="visually-hidden"> for ${humanize(type)}</span>
      </label>
      <p class="muted" id=${help}>
        Sends to this URL one delivery at a time, in the order the events were published, for every event type that uses this URL. While one
        is being retried, the ones after it wait: up to 5 h 21 min, the length of the retry schedule.
      </p>
    </div>
  `;
}

function testResultView(result: TestSendResult | ApiFailure): TemplateResult {
  if (!('outcome' in result)) return html`<p class="field-error" role="status">Test send refused: ${result.message}</p>`;
  const status = result.statusCode === null ? 'no HTTP answer' : `HTTP ${result.statusCode}`;
  return html`
    <p class=${result.success ? 'success' : 'field-error'} role="status">
      Test send: ${result.success ? 'delivered' : 'failed'} (${result.outcome}), ${status} in ${duration(result.durationMs)}
      ${result.error ? html`<br />${result.error}` : nothing}
      ${result.responseExcerpt ? html`<br />Response: <code>${result.responseExcerpt}</code>` : nothing}
    </p>
  `;
}
