import { html, nothing, type TemplateResult } from 'lit';
import type { Attempt, Delivery, DeliveryDetail } from './api';
import { duration, humanize, time } from './labels';

export interface DeliveryLogModel {
  readonly deliveries: readonly Delivery[];
  readonly details: Readonly<Record<number, DeliveryDetail>>;
  readonly expanded: ReadonlySet<number>;
}

export interface DeliveryLogActions {
  refresh(): void;
  toggleAttempts(id: number): void;
  redeliver(id: number): void;
}

/** The newest deliveries; each opens onto its attempts (status, duration, response excerpt) and can be redelivered. */
export function deliveryLogView(model: DeliveryLogModel, actions: DeliveryLogActions): TemplateResult {
  return html`
    <section class="log" aria-labelledby="log-heading">
      <div class="section-head">
        <h2 id="log-heading">Delivery log</h2>
        <button type="button" class="secondary" @click=${() => actions.refresh()}>Refresh log</button>
      </div>
      ${
        model.deliveries.length === 0
          ? html`<p class="muted">No deliveries yet. Test sends are not logged; events your webhooks receive are.</p>`
          : html`
              <table>
                <thead>
                  <tr>
                    <th scope="col">Delivery</th>
                    <th scope="col">Sequence</th>
                    <th scope="col">Event</th>
                    <th scope="col">Status</th>
                    <th scope="col">Attempts</th>
                    <th scope="col">Created</th>
                    <th scope="col"><span class="visually-hidden">Actions</span></th>
                  </tr>
                </thead>
                <tbody>
                  ${model.deliveries.map((d) => deliveryRows(d, model, actions))}
                </tbody>
              </table>
            `
      }
    </section>
  `;
}

function deliveryRows(d: Delivery, model: DeliveryLogModel, actions: DeliveryLogActions): TemplateResult {
  const open = model.expanded.has(d.id);
  const detail = model.details[d.id];
  return html`
    <tr>
      <th scope="row">#${d.id}</th>
      <td>${sequenceText(d)}</td>
      <td>${humanize(d.type)}</td>
      <td><span class="status status-${d.status.toLowerCase()}">${d.status}</span>${waiting(d)}</td>
      <td>${d.attemptCount}</td>
      <td>${time(d.createdAt)}</td>
      <td class="actions">
        <button type="button" class="secondary" aria-expanded=${open ? 'true' : 'false'} @click=${() => actions.toggleAttempts(d.id)}>
          ${open ? 'Hide' : 'Show'} attempts<span class="visually-hidden"> of delivery ${d.id}</span>
        </button>
        <button type="button" class="secondary" ?disabled=${d.status === 'PENDING'} @click=${() => actions.redeliver(d.id)}>
          Redeliver<span class="visually-hidden"> delivery ${d.id}</span>
        </button>
      </td>
    </tr>
    ${
      open
        ? html`<tr class="attempts-row">
            <td colspan="7">${detail ? attemptsTable(detail) : html`<p class="muted">Loading attempts…</p>`}</td>
          </tr>`
        : nothing
    }
  `;
}

/** Its `X-Service-Sequence` (its number among the user's deliveries to its URL); `—` for one queued before numbering. */
export function sequenceText(d: Pick<Delivery, 'sequence'>): string {
  return d.sequence === null ? '—' : String(d.sequence);
}

function waiting(d: Delivery): TemplateResult | typeof nothing {
  const reason = (d as { waitingReason?: unknown }).waitingReason;
  if (typeof reason !== 'string' || !reason) return nothing;
  return html`<br /><span class="muted">${reason}${d.nextAttemptAt ? `, next try ${time(d.nextAttemptAt)}` : ''}</span>`;
}

function attemptsTable(detail: DeliveryDetail): TemplateResult {
  return html`
    <table class="attempts">
      <caption>
        Attempts of delivery #${detail.id} (event
        <code>${detail.eventId}</code
        >)
      </caption>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">Started</th>
          <th scope="col">Outcome</th>
          <th scope="col">HTTP status</th>
          <th scope="col">Duration</th>
          <th scope="col">Response excerpt</th>
        </tr>
      </thead>
      <tbody>
        ${detail.attempts.map((a) => attemptRow(a))}
      </tbody>
    </table>
  `;
}

function attemptRow(a: Attempt): TemplateResult {
  return html`
    <tr>
      <td>${a.attemptNumber}</td>
      <td>${time(a.startedAt)}</td>
      <td>${a.outcome}${a.error ? html`<br /><span class="muted">${a.error}</span>` : nothing}</td>
      <td>${a.statusCode ?? '—'}</td>
      <td>${duration(a.durationMs)}</td>
      <td>${a.responseExcerpt ? html`<code class="excerpt">${a.responseExcerpt}</code>` : html`<span class="muted">empty</span>`}</td>
    </tr>
  `;
}
