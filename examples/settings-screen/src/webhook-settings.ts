import { html, LitElement, nothing, type PropertyValues } from 'lit';
import {
  type ApiFailure,
  type ApiResult,
  type Delivery,
  type DeliveryDetail,
  type EffectiveRow,
  type EventType,
  type SignatureScheme,
  type WebhookEventType,
  settingsApi,
  type SettingsApi,
  type TestSendResult,
  type WebhookHealth,
} from './api';
import { deliveryLogView } from './delivery-log-view';
import type { RecoveryOutcome } from './health-view';
import { humanize } from './labels';
import { preferencesView, type WebhookDraft } from './preferences-view';
import { type RevealedSecret, secretPanelView } from './secret-panel-view';
import { styles } from './styles';

const TOKEN_KEY = 'settings-screen.dev-token';
const DAY_MS = 24 * 60 * 60 * 1000;
/** The recover call's longest window (FAILED deliveries are kept 90 days), less a minute for the two clocks. */
const RECOVER_WINDOW_MS = 90 * DAY_MS - 60_000;

interface Notice {
  readonly tone: 'error' | 'info';
  readonly text: string;
}

/** `<webhook-settings>`: one user's webhook settings and delivery log, on the settings API of the page's origin. */
export class WebhookSettings extends LitElement {
  static override styles = styles;
  static override properties = {
    token: { state: true },
    rows: { state: true },
    drafts: { state: true },
    fieldErrors: { state: true },
    testResults: { state: true },
    health: { state: true },
    recoveries: { state: true },
    recovering: { state: true },
    revealed: { state: true },
    notice: { state: true },
    deliveries: { state: true },
    details: { state: true },
    expanded: { state: true },
  };

  // Example only: a real app gets the user's token from its own sign-in, not from a field.
  private token = sessionStorage.getItem(TOKEN_KEY) ?? '';
  private rows: EffectiveRow[] = [];
  private drafts: Record<string, WebhookDraft> = {};
  private fieldErrors: Record<string, Record<string, string>> = {};
  private testResults: Record<string, TestSendResult | ApiFailure> = {};
  private health: Record<string, WebhookHealth> = {};
  private recoveries: Record<string, RecoveryOutcome> = {};
  private recovering = new Set<string>();
  private revealed: RevealedSecret | undefined;
  private notice: Notice | undefined;
  private deliveries: Delivery[] = [];
  private details: Record<number, DeliveryDetail> = {};
  private expanded = new Set<number>();

  private get api(): SettingsApi {
    return settingsApi(this.token);
  }

  override connectedCallback(): void {
    super.connectedCallback();
    if (this.token) void this.load();
  }

  protected override updated(changed: PropertyValues): void {
    // A newly revealed secret takes the focus, so that keyboard and screen-reader users meet it first.
    if (changed.has('revealed') && this.revealed && !changed.get('revealed'))
      this.renderRoot.querySelector<HTMLElement>('#secret-heading')?.focus();
  }

  override render() {
    return html`
      <h1>Webhook notifications</h1>
      <p class="muted">Choose which events are sent as signed HTTPS requests to your endpoint, and see how they were delivered.</p>
      ${this.tokenForm()}
      <div class="notices" aria-live="polite">${this.notice ? this.noticeView(this.notice) : nothing}</div>
      ${this.revealed ? secretPanelView(this.revealed, { copy: () => void this.copySecret(), dismiss: () => this.dismissSecret() }) : nothing}
      ${
        this.rows.length
          ? preferencesView(
              {
                rows: this.rows,
                drafts: this.drafts,
                fieldErrors: this.fieldErrors,
                testResults: this.testResults,
                health: this.health,
                recoveries: this.recoveries,
                recovering: this.recovering,
              },
              {
                edit: (type, draft) => (this.drafts = { ...this.drafts, [type]: draft }),
                save: (type) => void this.save(type),
                sendTest: (type) => void this.sendTest(type),
                rotateSecret: (type) => void this.rotateSecret(type),
                setSignatureSchemes: (type, schemes) => void this.setSignatureSchemes(type, schemes),
                setOrderedDelivery: (type, on) => void this.setOrderedDelivery(type, on),
                reenableAndRecover: (type) => void this.reenableAndRecover(type),
              },
            )
          : nothing
      }
      ${
        this.rows.length
          ? deliveryLogView(
              { deliveries: this.deliveries, details: this.details, expanded: this.expanded },
              {
                refresh: () => void this.loadDeliveries(),
                toggleAttempts: (id) => void this.toggleAttempts(id),
                redeliver: (id) => void this.redeliver(id),
              },
            )
          : nothing
      }
    `;
  }

  private tokenForm() {
    return html`
      <form
        class="token"
        @submit=${(e: SubmitEvent) => {
          e.preventDefault();
          const input = (e.target as HTMLFormElement).elements.namedItem('token') as HTMLInputElement;
          this.token = input.value.trim();
          sessionStorage.setItem(TOKEN_KEY, this.token);
          void this.load();
        }}
      >
        <label for="token">Developer token</label>
        <input id="token" name="token" type="password" autocomplete="off" .value=${this.token} aria-describedby="token-hint" />
        <button type="submit">Use token</button>
        <p id="token-hint" class="muted">
          Example only: paste a user token from <code>npm run token -- &lt;userId&gt;</code>. A real app signs the user in itself.
        </p>
      </form>
    `;
  }

  private noticeView(notice: Notice) {
    return html`<p class="notice ${notice.tone}" role=${notice.tone === 'error' ? 'alert' : 'status'}>${notice.text}</p>`;
  }

  /** The preferences with each saved webhook's health, then the delivery log. */
  private async load(): Promise<void> {
    const [rows, health] = await Promise.all([this.call(() => this.api.effective()), this.call(() => this.api.health())]);
    if (!rows) return;
    this.rows = rows;
    this.drafts = {};
    if (health) this.health = Object.fromEntries(health.map((h) => [h.type, h]));
    await this.loadDeliveries();
  }

  private async loadDeliveries(): Promise<void> {
    const page = await this.call(() => this.api.deliveries());
    if (!page) return;
    this.deliveries = page.data;
    const details = await Promise.all([...this.expanded].map(async (id) => [id, await this.call(() => this.api.delivery(id))] as const));
    this.details = { ...this.details, ...Object.fromEntries(details.filter(([, detail]) => detail)) };
  }

  private async save(type: EventType): Promise<void> {
    const row = this.rows.find((r) => r.type === type && r.channel === 'WEBHOOK');
    const draft = this.drafts[type] ?? { enabled: row?.enabled ?? false, url: row?.webhookUrl ?? '' };
    const saved = await this.call(() => this.api.saveWebhook(type, draft.enabled, draft.url.trim()), type);
    if (!saved) return;
    this.fieldErrors = { ...this.fieldErrors, [type]: {} };
    if (saved.webhookSecret) this.revealed = { type, secret: saved.webhookSecret, copied: false };
    this.notice = { tone: 'info', text: `Saved: webhook for ${humanize(type)} is ${saved.enabled ? 'on' : 'off'}.` };
    await this.load();
  }

  private async setSignatureSchemes(type: EventType, schemes: SignatureScheme[]): Promise<void> {
    const row = this.rows.find((r) => r.type === type && r.channel === 'WEBHOOK');
    const saved = await this.call(() => this.api.setSignatureSchemes(type, row?.webhookUrl ?? '', schemes), type);
    if (!saved) return;
    this.notice = { tone: 'info', text: `Saved: the webhook for ${humanize(type)} is signed with ${schemes.join(' and ')}.` };
    await this.load();
  }

  /** Ordered delivery on or off for the webhook's URL; the reload shows it on every row of that URL. */
  private async setOrderedDelivery(type: EventType, on: boolean): Promise<void> {
    const row = this.rows.find((r) => r.type === type && r.channel === 'WEBHOOK');
    const saved = await this.call(() => this.api.setOrderedDelivery(type, row?.webhookUrl ?? '', on), type);
    if (saved)
      this.notice = {
        tone: 'info',
        text: `Saved: ordered delivery is ${on ? 'on' : 'off'} for the URL of the webhook for ${humanize(type)}.`,
      };
    // Reloaded either way: a refused change must not leave the switch showing what was not saved.
    await this.load();
  }

  private async sendTest(type: WebhookEventType): Promise<void> {
    const answer = await this.call(() => this.api.sendTest(type), type);
    if (answer) this.testResults = { ...this.testResults, [type]: answer };
  }

  private async rotateSecret(type: WebhookEventType): Promise<void> {
    if (!confirm(`Rotate the signing secret for ${humanize(type)}? The current secret stops signing at once.`)) return;
    const rotated = await this.call(() => this.api.rotateSecret(type), type);
    if (rotated?.webhookSecret) this.revealed = { type, secret: rotated.webhookSecret, copied: false };
  }

  /**
   * Turns a webhook the service disabled back on (same URL), then queues again what ended FAILED since it began failing
   * (or since it was disabled), at most 90 days back; says what it did, or why not, next to the button.
   */
  private async reenableAndRecover(type: EventType): Promise<void> {
    const health = this.health[type];
    const row = this.rows.find((r) => r.type === type && r.channel === 'WEBHOOK');
    const url = health?.webhookUrl ?? row?.webhookUrl ?? '';
    this.recovering = new Set([...this.recovering, type]);
    try {
      const saved = await this.attempt(() => this.api.saveWebhook(type, true, url));
      if (!saved.ok) {
        this.recoveries = {
          ...this.recoveries,
          [type]: { ok: false, text: `Could not re-enable the webhook: ${failureText(saved.failure)}` },
        };
        return;
      }
      if (saved.data.webhookSecret) this.revealed = { type, secret: saved.data.webhookSecret, copied: false };
      const floor = Date.now() - RECOVER_WINDOW_MS;
      const from = Date.parse(health?.failingSince ?? health?.disabledAt ?? '') || floor;
      const recovered = await this.attempt(() => this.api.recover(type, new Date(Math.max(from, floor)).toISOString()));
      this.recoveries = {
        ...this.recoveries,
        [type]: recovered.ok
          ? { ok: true, text: recoveredText(recovered.data.queued, recovered.data.more) }
          : { ok: false, text: `Re-enabled, but the failed deliveries were not queued again: ${failureText(recovered.failure)}` },
      };
    } finally {
      const recovering = new Set(this.recovering);
      recovering.delete(type);
      this.recovering = recovering;
      await this.load();
    }
  }

  /** One call whose failure the caller shows itself (a network error becomes a failure with status 0). */
  private async attempt<T>(request: () => Promise<ApiResult<T>>): Promise<ApiResult<T>> {
    try {
      return await request();
    } catch (error) {
      return { ok: false, failure: { status: 0, message: `Could not reach the service: ${(error as Error).message}`, fieldErrors: {} } };
    }
  }

  private async toggleAttempts(id: number): Promise<void> {
    const expanded = new Set(this.expanded);
    if (!expanded.delete(id)) expanded.add(id);
    this.expanded = expanded;
    if (!expanded.has(id)) return;
    const detail = await this.call(() => this.api.delivery(id));
    if (detail) this.details = { ...this.details, [id]: detail };
  }

  private async redeliver(id: number): Promise<void> {
    const redelivery = await this.call(() => this.api.redeliver(id));
    if (!redelivery) return;
    this.notice = {
      tone: 'info',
      text: `Delivery #${id} is being sent again as delivery #${redelivery.id}, with the same event id. Refresh the log to see its attempts.`,
    };
    this.expanded = new Set([...this.expanded, redelivery.id]);
    await this.loadDeliveries();
  }

  private async copySecret(): Promise<void> {
    if (!this.revealed) return;
    await navigator.clipboard.writeText(this.revealed.secret);
    this.revealed = { ...this.revealed, copied: true };
  }

  private dismissSecret(): void {
    this.revealed = undefined;
  }

  /** Runs one call; a failure becomes the field errors of `type` (400 naming fields) or the notice, a 429 with its wait. */
  private async call<T>(request: () => Promise<ApiResult<T>>, type?: EventType): Promise<T | undefined> {
    let result: ApiResult<T>;
    try {
      result = await request();
    } catch (error) {
      this.notice = { tone: 'error', text: `Could not reach the service: ${(error as Error).message}` };
      return undefined;
    }
    if (result.ok) return result.data;
    const failure = result.failure;
    if (type && Object.keys(failure.fieldErrors).length) {
      this.fieldErrors = { ...this.fieldErrors, [type]: failure.fieldErrors };
      this.notice = undefined;
    } else if (type && failure.status === 400) {
      this.testResults = { ...this.testResults, [type]: failure };
    } else this.notice = { tone: 'error', text: describeFailure(failure) };
    return undefined;
  }
}

function recoveredText(queued: number, more: boolean): string {
  const deliveries = `${queued.toLocaleString('en-GB')} failed ${queued === 1 ? 'delivery' : 'deliveries'}`;
  return `Re-enabled; ${deliveries} queued again${more ? ' (the first 10,000: recover the rest through the API)' : ''}.`;
}

/** A failure as one sentence: the 429 wait, the 401 advice, or the service's message with its field messages. */
function failureText(failure: ApiFailure): string {
  if (failure.status === 429 || failure.status === 401) return describeFailure(failure);
  const fields = Object.entries(failure.fieldErrors).map(([field, message]) => `${field}: ${message}`);
  return [failure.message, ...fields].join('; ');
}

function describeFailure(failure: ApiFailure): string {
  if (failure.status === 429) {
    const wait = failure.retryAfterSeconds;
    return wait === undefined
      ? 'Too many requests: please wait a moment before trying again.'
      : `Too many requests: please wait ${wait} s before trying again (the service limits how often this can be done).`;
  }
  if (failure.status === 401) return 'The service did not accept the token: sign in again (here: paste a fresh developer token).';
  return `The service refused: ${failure.message}`;
}

customElements.define('webhook-settings', WebhookSettings);
