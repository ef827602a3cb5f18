/**
 * How an attempt ended, in the delivery log, the metrics and the receiver-facing docs. `circuit_open`: the attempt came due
 * while its endpoint's circuit was open; it was skipped without a request and counts as one of the 6.
 */
export const ATTEMPT_OUTCOMES = ['success', 'http_error', 'timeout', 'connect_error', 'blocked', 'tls_error', 'circuit_open'] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];

export interface WebhookRequest {
  url: string;
  /** Sent byte-for-byte as its UTF-8 encoding, with a Content-Length. */
  body: string;
  /** Every header the receiver should get (Content-Type, User-Agent, signature…); nothing is added but Host/Connection/Content-Length. */
  headers: Record<string, string>;
}

export interface AttemptResult {
  outcome: AttemptOutcome;
  /** Set whenever a status line arrived (3xx/4xx/5xx included), even if the attempt failed afterwards. */
  statusCode: number | null;
  /** Whole milliseconds from the start of send() to the outcome. */
  durationMs: number;
  /**
   * Whole milliseconds from the start of send() to when the request was written on its connection: more than the
   * connect time when the process was paused in between. Absent when no request was written.
   */
  sentAfterMs?: number;
  /** Short human-readable reason; never contains header values or the request/response body. Null on success. */
  error: string | null;
  /** First bytes (at most maxResponseBytes, default 1024) of the response body as UTF-8; null if there was none. */
  responseExcerpt: string | null;
  /** Outcome `circuit_open` only: until when the endpoint's circuit is open (epoch ms). */
  circuitOpenUntil?: number;
}
