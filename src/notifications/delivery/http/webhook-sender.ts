import { existsSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent, buildConnector } from 'undici';
import type { WebhookUrlPolicy } from '../../url-policy/webhook-url-policy';
import { positiveInteger } from '../../common/values/positive-integer';
import { blockedBeforeConnect } from './attempt-error';
import type { AttemptResult, WebhookRequest } from './attempt-result';
import { DeliveryAttempt } from './delivery-attempt';
import { dropInterimResponses } from './interim-responses';

export type { AttemptOutcome, AttemptResult, WebhookRequest } from './attempt-result';

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024;
export const DEFAULT_CONNECTIONS_PER_ORIGIN = 16;

// Sized for many thousands of endpoints: a smaller cache that users cycle through is emptied over and over.
const TARGET_CACHE_SIZE = 10_000;

interface Target {
  origin: string;
  path: string;
}

export interface WebhookSenderOptions {
  urlPolicy: WebhookUrlPolicy;
  /** PEM of extra trusted CA(s), added to Node's bundled roots and NODE_EXTRA_CA_CERTS, not replacing them. */
  extraCaPem?: string;
  /** Overall deadline per attempt: connect + TLS + headers + body. Default 5000. */
  timeoutMs?: number;
  /** Keep at most this much of the response body as the attempt's excerpt. Default 1024. The body is read to its end up to 64 KiB (keeping the connection), and the connection is dropped beyond. */
  maxResponseBytes?: number;
  /** Keep-alive pool size per origin. Default 16. */
  connectionsPerOrigin?: number;
}

/**
 * POSTs webhook bodies over HTTPS through one shared undici keep-alive pool. Every socket is opened through the URL
 * urlPolicy's lookup (re-resolving and checking right before connecting, which defeats DNS rebinding); IP literals and
 * localhost, which never reach a lookup, are checked up front. Redirects are never followed.
 */
export class WebhookSender {
  private readonly urlPolicy: WebhookUrlPolicy;
  private readonly agent: Agent;
  private readonly timeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly targets = new Map<string, Target>();
  private closed: Promise<void> | null = null;

  constructor(options: WebhookSenderOptions) {
    this.urlPolicy = options.urlPolicy;
    this.timeoutMs = positiveInteger('WebhookSender timeoutMs', options.timeoutMs ?? DEFAULT_WEBHOOK_TIMEOUT_MS);
    this.maxResponseBytes = positiveInteger('WebhookSender maxResponseBytes', options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES);
    const connections = positiveInteger(
      'WebhookSender connectionsPerOrigin',
      options.connectionsPerOrigin ?? DEFAULT_CONNECTIONS_PER_ORIGIN,
    );
    this.agent = new Agent({
      connections,
      pipelining: 1,
      allowH2: false,
      headersTimeout: this.timeoutMs,
      bodyTimeout: this.timeoutMs,
      connect: acceptingInterimResponses(
        buildConnector({
          lookup: this.urlPolicy.createLookup(),
          timeout: this.timeoutMs,
          allowH2: false,
          // One connector (and TLS session cache) for every origin, where undici would build one per connection.
          maxCachedSessions: TARGET_CACHE_SIZE,
          // Built once: a `ca` array would otherwise be parsed into a fresh context on every new connection.
          ...(options.extraCaPem
            ? { secureContext: createSecureContext({ ca: [...rootCertificates, ...nodeExtraCaCerts(), options.extraCaPem] }) }
            : {}),
        }),
      ),
    });
  }

  /** Never rejects: every failure, including an unparseable URL, becomes an AttemptResult. */
  send(request: WebhookRequest): Promise<AttemptResult> {
    const startedAt = performance.now();
    let target: Target;
    try {
      target = this.targetOf(request.url);
    } catch (error) {
      return Promise.resolve(blockedResult(error, startedAt));
    }
    const attempt = new DeliveryAttempt(startedAt, this.timeoutMs, this.maxResponseBytes);
    try {
      this.agent.dispatch(
        { origin: target.origin, path: target.path, method: 'POST', headers: request.headers, body: request.body },
        attempt,
      );
    } catch (error) {
      attempt.fail(error);
    }
    return attempt.result;
  }

  /**
   * The static checks (checkSyntax, literal host) depend only on the URL string and the urlPolicy's fixed allow-list, so
   * their outcome for a URL is remembered; only accepted URLs are cached, and the cache is bounded.
   */
  private targetOf(rawUrl: string): Target {
    let target = this.targets.get(rawUrl);
    if (target === undefined) {
      const url = this.urlPolicy.checkSyntax(rawUrl);
      // Node never calls `lookup` for IP literals, so the connect-time check would not see them.
      this.urlPolicy.assertLiteralHostAllowed(url.hostname);
      target = { origin: url.origin, path: url.pathname + url.search };
      if (this.targets.size >= TARGET_CACHE_SIZE) this.targets.clear();
      this.targets.set(rawUrl, target);
    }
    return target;
  }

  /**
   * Lets in-flight attempts finish (each is bounded by timeoutMs), then closes every pooled connection. Idempotent;
   * later send() calls resolve as connect_error "sender is closed".
   */
  close(): Promise<void> {
    this.closed ??= this.agent.close();
    return this.closed;
  }
}

function blockedResult(error: unknown, startedAt: number): AttemptResult {
  const { outcome, error: reason } = blockedBeforeConnect(error);
  const durationMs = Math.round(performance.now() - startedAt);
  return { outcome, statusCode: null, durationMs, error: reason, responseExcerpt: null };
}

/** Every connection drops unsolicited 1xx responses, which undici's HTTP/1.1 parser would fail (see interim-responses). */
function acceptingInterimResponses(connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) =>
    connect(options, (...args) => {
      const socket = args[1]; // undici passes the error alone on failure
      if (socket) dropInterimResponses(socket);
      callback(...args);
    });
}

// A custom `ca` replaces Node's default store, which includes NODE_EXTRA_CA_CERTS: keep honouring it.
function nodeExtraCaCerts(): string[] {
  const file = process.env.NODE_EXTRA_CA_CERTS;
  return file && existsSync(file) ? [readFileSync(file, 'utf8')] : [];
}
