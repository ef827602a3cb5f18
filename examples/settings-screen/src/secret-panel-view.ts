import { html, type TemplateResult } from 'lit';
import type { EventType } from './api';
import { humanize } from './labels';

/** A signing secret as the service returned it, once: kept in memory only, so a reload forgets it. */
export interface RevealedSecret {
  readonly type: EventType;
  readonly secret: string;
  copied: boolean;
}

export interface SecretPanelActions {
  copy(): void;
  dismiss(): void;
}

export function secretPanelView(revealed: RevealedSecret, actions: SecretPanelActions): TemplateResult {
  return html`
    <section class="secret" aria-labelledby="secret-heading">
      <h2 id="secret-heading" tabindex="-1">Signing secret for ${humanize(revealed.type)}</h2>
      <p><strong>Copy it now: you will not see this again.</strong> Your receiver needs it to verify each webhook's signature.</p>
      <div class="secret-value">
        <code id="secret-value">${revealed.secret}</code>
        <button type="button" @click=${() => actions.copy()}>Copy secret</button>
        <span role="status">${revealed.copied ? 'Copied to the clipboard' : ''}</span>
      </div>
      <button type="button" class="secondary" @click=${() => actions.dismiss()}>I have stored it</button>
    </section>
  `;
}
