/**
 * Why the service turned a webhook off by itself (auto-disable), tolerant of the document's evolution: a stable code
 * (`disabledReason.code` or `disabledReasonCode`) is shown when present, with the text when there is one.
 */
export interface DisabledReason {
  readonly code?: string;
  readonly text?: string;
}

export function disabledReasonOf(row: object): DisabledReason | undefined {
  const fields = row as { disabledReason?: unknown; disabledReasonCode?: unknown; disabledReasonMessage?: unknown };
  const reason = fields.disabledReason;
  const nested = typeof reason === 'object' && reason !== null ? (reason as { code?: unknown; message?: unknown }) : {};
  const code = stringOrUndefined(nested.code) ?? stringOrUndefined(fields.disabledReasonCode);
  const text = stringOrUndefined(reason) ?? stringOrUndefined(nested.message) ?? stringOrUndefined(fields.disabledReasonMessage);
  return code || text ? { code, text } : undefined;
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
