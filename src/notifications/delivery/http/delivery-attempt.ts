import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import type { Dispatcher } from 'undici';
import { type ClassifiedError, classifyError, DEADLINE_EXCEEDED } from './attempt-error';
import type { AttemptResult } from './attempt-result';

/**
 * A response body is read to its end (the excerpt kept, the rest discarded), so the keep-alive
 * connection serves the next attempt; a body larger than this ends the attempt and drops the connection.
 */
const MAX_DRAINED_RESPONSE_BYTES = 64 * 1024;

/** Abort reason for a response body too large to drain. */
const RESPONSE_TOO_LARGE = new Error('webhook response body too large to drain');

/**
 * One POST, as an undici dispatch handler: response chunks are collected straight from the parser (no body stream),
 * and the deadline settles the attempt the moment it fires, even while the request still waits for a pooled
 * connection; the request is then aborted as soon as undici hands it a socket, before any byte is written.
 */
export class DeliveryAttempt implements Dispatcher.DispatchHandler {
  readonly result: Promise<AttemptResult>;
  private resolve!: (result: AttemptResult) => void;
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  private statusCode: number | null = null;
  private chunks: Buffer[] | null = null;
  private size = 0;
  private received = 0;
  private sentAfterMs: number | undefined;
  private readonly deadline: NodeJS.Timeout;

  constructor(
    private readonly startedAt: number,
    private readonly timeoutMs: number,
    private readonly maxResponseBytes: number,
  ) {
    this.result = new Promise<AttemptResult>((resolve) => {
      this.resolve = resolve;
    });
    this.deadline = setTimeout(onDeadline, timeoutMs, this);
  }

  /**
   * undici calls it on a connected socket, right before it writes the request. A deadline past though its timer has not
   * run (the process was paused waiting for the socket, and the I/O that freed it ran first as it woke) settles the attempt
   * here: the leases the attempt started under no longer cover a request written now.
   */
  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (performance.now() - this.startedAt >= this.timeoutMs) this.expire();
    if (this.settled) controller.abort(DEADLINE_EXCEEDED);
    else {
      this.controller = controller;
      this.sentAfterMs = Math.round(performance.now() - this.startedAt);
    }
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    if (statusCode >= 200) this.statusCode = statusCode; // 1xx interim responses are followed by the real one
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    if (this.size <= this.maxResponseBytes) {
      (this.chunks ??= []).push(chunk);
      this.size += chunk.length;
    }
    this.received += chunk.length;
    if (this.received > MAX_DRAINED_RESPONSE_BYTES) {
      this.settleWithResponse();
      controller.abort(RESPONSE_TOO_LARGE);
    }
  }

  onResponseEnd(): void {
    if (!this.settled) this.settleWithResponse();
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, error: Error): void {
    if (!this.settled) this.settleWithFailure(classifyError(error, this.timeoutMs));
  }

  /** Called by the sender if dispatching threw synchronously. */
  fail(error: unknown): void {
    if (!this.settled) this.settleWithFailure(classifyError(error, this.timeoutMs));
  }

  expire(): void {
    if (this.settled) return;
    this.settleWithFailure(classifyError(DEADLINE_EXCEEDED, this.timeoutMs));
    this.controller?.abort(DEADLINE_EXCEEDED);
  }

  private settleWithResponse(): void {
    const statusCode = this.statusCode ?? 0;
    const success = statusCode >= 200 && statusCode < 300;
    this.settle({
      outcome: success ? 'success' : 'http_error',
      statusCode: this.statusCode,
      durationMs: Math.round(performance.now() - this.startedAt),
      error: success ? null : httpError(statusCode),
      responseExcerpt: this.excerpt(),
    });
  }

  private settleWithFailure(classified: ClassifiedError): void {
    const elapsed = Math.round(performance.now() - this.startedAt);
    this.settle({
      outcome: classified.outcome,
      statusCode: this.statusCode,
      // Timers run on the event loop's cached clock and may fire a fraction of a millisecond "early" by
      // performance.now(); a timed-out attempt did last the whole deadline.
      durationMs: classified.outcome === 'timeout' ? Math.max(elapsed, this.timeoutMs) : elapsed,
      error: classified.error,
      responseExcerpt: this.excerpt(),
    });
  }

  private settle(result: AttemptResult): void {
    this.settled = true;
    clearTimeout(this.deadline);
    this.chunks = null;
    this.resolve(this.sentAfterMs === undefined ? result : { ...result, sentAfterMs: this.sentAfterMs });
  }

  /** The first maxResponseBytes as UTF-8, cut at the last complete character; null if no body arrived. */
  private excerpt(): string | null {
    const chunks = this.chunks;
    if (chunks === null || this.size === 0) return null;
    const bytes = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.size);
    const capped = bytes.length > this.maxResponseBytes ? bytes.subarray(0, this.maxResponseBytes) : bytes;
    return new StringDecoder('utf8').write(capped);
  }
}

function onDeadline(attempt: DeliveryAttempt): void {
  attempt.expire();
}

/** The 3xx that send the client to another URL (RFC 9110 15.4); 300, 304, 305, 306 and the rest are plain answers. */
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);

function httpError(statusCode: number): string {
  if (REDIRECT_STATUSES.has(statusCode)) return `redirect (${statusCode}) not followed`;
  return `receiver answered ${statusCode}`;
}
