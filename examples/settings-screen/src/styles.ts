import { css } from 'lit';

// Colours keep at least 4.5:1 contrast on their background (axe checks it in the browser test).
export const styles = css`
  :host {
    display: block;
    max-width: 72rem;
    margin: 0 auto;
    padding: 1.5rem;
    color: #1b1f24;
    font:
      15px/1.45 system-ui,
      sans-serif;
  }
  h1 {
    font-size: 1.5rem;
    margin: 0 0 0.25rem;
  }
  h2 {
    font-size: 1.15rem;
    margin: 0 0 0.5rem;
  }
  section,
  form.token {
    background: #fff;
    border: 1px solid #d0d5dc;
    border-radius: 8px;
    padding: 1rem;
    margin: 1rem 0;
  }
  table {
    width: 100%;
    border-collapse: collapse;
  }
  th,
  td {
    text-align: left;
    vertical-align: top;
    padding: 0.4rem 0.5rem;
    border-top: 1px solid #e3e6ea;
  }
  thead th {
    border-top: none;
    color: #4a5562;
    font-weight: 600;
  }
  table.preferences {
    table-layout: fixed;
  }
  table.preferences th:nth-child(1) {
    width: 22%;
  }
  table.preferences th:nth-child(2),
  table.preferences th:nth-child(3) {
    width: 10%;
  }
  .notices {
    position: sticky;
    top: 0;
    z-index: 1;
  }
  .code {
    display: block;
    font:
      12px ui-monospace,
      monospace;
    color: #4a5562;
  }
  .muted {
    color: #4a5562;
  }
  button {
    font: inherit;
    padding: 0.3rem 0.75rem;
    border-radius: 6px;
    border: 1px solid #0b57d0;
    background: #0b57d0;
    color: #fff;
    cursor: pointer;
  }
  button.secondary {
    background: #fff;
    color: #0b57d0;
  }
  button:disabled {
    border-color: #8a939e;
    color: #4a5562;
    background: #eef0f2;
    cursor: not-allowed;
  }
  :focus-visible {
    outline: 3px solid #0b57d0;
    outline-offset: 2px;
  }
  input[type='url'],
  input[type='password'] {
    font: inherit;
    padding: 0.3rem 0.5rem;
    border: 1px solid #6b7580;
    border-radius: 6px;
    min-width: 20rem;
  }
  input[aria-invalid='true'] {
    border-color: #b3261e;
  }
  form.webhook {
    display: flex;
    flex-wrap: wrap;
    gap: 0.4rem 0.6rem;
    align-items: center;
  }
  form.webhook p,
  form.webhook .tools {
    flex-basis: 100%;
    margin: 0;
  }
  .signature {
    display: flex;
    flex-wrap: wrap;
    gap: 0.4rem 0.6rem;
    align-items: center;
    margin-top: 0.4rem;
  }
  .signature .public-key {
    flex-basis: 100%;
    margin: 0;
    overflow-wrap: anywhere;
  }
  .ordering {
    margin-top: 0.4rem;
  }
  .ordering p {
    margin: 0.2rem 0 0;
  }
  .tools {
    display: flex;
    gap: 0.6rem;
    align-items: center;
  }
  .field-error {
    color: #b3261e;
  }
  .success {
    color: #146c2e;
  }
  .warning {
    color: #7a4a00;
  }
  .health {
    margin-top: 0.4rem;
  }
  .health p {
    margin: 0 0 0.3rem;
  }
  /* The badge's text names the state; the colour repeats it (text on tint, at least 4.5:1). */
  .badge {
    display: inline-block;
    padding: 0 0.5rem;
    border: 1px solid;
    border-radius: 999px;
    font-size: 13px;
    font-weight: 600;
  }
  .badge-healthy {
    background: #e8f3ec;
    color: #0f5223;
  }
  .badge-failing {
    background: #fdecea;
    color: #8c1d18;
  }
  .badge-circuit-open {
    background: #fff8e6;
    color: #6b4100;
  }
  .badge-disabled {
    background: #fdecea;
    color: #8c1d18;
    border-style: dashed;
  }
  .badge-off {
    background: #eef0f2;
    color: #3a434d;
  }
  .notice {
    border-radius: 8px;
    padding: 0.75rem 1rem;
    margin: 1rem 0;
    border: 1px solid;
  }
  .notice.error {
    background: #fdecea;
    border-color: #b3261e;
    color: #8c1d18;
  }
  .notice.info {
    background: #e8f3ec;
    border-color: #146c2e;
    color: #0f5223;
  }
  .secret {
    border: 2px solid #7a4a00;
    background: #fff8e6;
  }
  .secret-value {
    display: flex;
    gap: 0.6rem;
    align-items: center;
    margin-bottom: 0.75rem;
  }
  .secret-value code {
    font-size: 14px;
    padding: 0.3rem 0.5rem;
    background: #fff;
    border: 1px solid #d0d5dc;
    border-radius: 4px;
  }
  .section-head {
    display: flex;
    justify-content: space-between;
    align-items: center;
  }
  .status {
    font-weight: 600;
  }
  .status-delivered {
    color: #146c2e;
  }
  .status-failed {
    color: #b3261e;
  }
  .actions {
    white-space: nowrap;
  }
  .attempts caption {
    text-align: left;
    font-weight: 600;
    padding-bottom: 0.25rem;
  }
  .excerpt {
    white-space: pre-wrap;
    word-break: break-all;
  }
  .visually-hidden {
    position: absolute;
    width: 1px;
    height: 1px;
    overflow: hidden;
    clip: rect(0 0 0 0);
    white-space: nowrap;
  }
`;
