import { SERVICE_VERSION } from '../../../version';
import type { AttemptResult } from '../http/attempt-result';
import { installedOpenTelemetry, type OpenTelemetryApi, type OtelSpan, type OtelSpanContext } from './open-telemetry';
import { randomSpanId, type TraceContext, traceHeaders } from './trace-context';

/** The instrumentation scope of the module's spans. */
export const TRACER_NAME = '@funding/notification-webhooks';

const SAMPLED = 0x01;
const ALL_ZERO = /^0+$/;

/** What a publish span says: never the events' contents. */
export interface PublishSpanInfo {
  readonly eventTypes: readonly string[];
}

/** What an attempt span says: the host and port of the URL, never its path or query (they may carry a token). */
export interface AttemptSpanInfo {
  readonly url: string;
  readonly eventType: string;
  readonly eventId: string;
  readonly deliveryId: number;
  readonly attempt: number;
}

/**
 * Trace context for publishes and attempts. Without `@opentelemetry/api` (or with it and no SDK registered) it only
 * carries the publisher's `traceparent` to every attempt, each under a fresh span id. With an SDK, a publish is a
 * `webhook publish` span (PRODUCER), child of the given `traceparent` or else of the active span, and the context stored
 * with its events is that span's; each attempt is a `webhook attempt` span (CLIENT), child of the stored context, and
 * its `traceparent` header names that span.
 */
export class DeliveryTracing {
  /** `openTelemetry`: the API to use, or null for none; by default the installed package, loaded on first use. */
  constructor(private readonly openTelemetry?: OpenTelemetryApi | null) {}

  /** Runs a publish as a span, handing `publish` the trace context to store with its events (none when there is no trace). */
  async publish<T extends { queuedDeliveries: number; replayed?: true }>(
    parent: TraceContext | undefined,
    info: PublishSpanInfo,
    publish: (stored: TraceContext | undefined) => Promise<T>,
  ): Promise<T> {
    const api = this.api();
    if (!api) return publish(parent);
    const context = parent ? api.trace.setSpanContext(api.ROOT_CONTEXT, remoteSpanContext(parent)) : api.context.active();
    const span = api.trace
      .getTracer(TRACER_NAME, SERVICE_VERSION)
      .startSpan('webhook publish', { kind: api.SpanKind.PRODUCER, attributes: publishAttributes(info) }, context);
    const stored = storedContext(span.spanContext(), parent);
    return inSpan(
      api,
      span,
      () => api.context.with(api.trace.setSpan(context, span), () => publish(stored)),
      (result) =>
        span.setAttributes({ 'webhook.queued_deliveries': result.queuedDeliveries, 'webhook.replayed': result.replayed ?? false }),
    );
  }

  /**
   * Runs an attempt of an event published with `trace` as its child span, handing `send` the `traceparent` (and
   * `tracestate`) headers to send; none without a trace.
   */
  async attempt(
    trace: TraceContext | undefined,
    info: AttemptSpanInfo,
    send: (headers: Readonly<Record<string, string>>) => Promise<AttemptResult>,
  ): Promise<AttemptResult> {
    if (!trace) return send({});
    const api = this.api();
    if (!api) return send(traceHeaders(trace, randomSpanId()));
    const context = api.trace.setSpanContext(api.ROOT_CONTEXT, remoteSpanContext(trace));
    const span = api.trace
      .getTracer(TRACER_NAME, SERVICE_VERSION)
      .startSpan('webhook attempt', { kind: api.SpanKind.CLIENT, attributes: attemptAttributes(info) }, context);
    const own = span.spanContext();
    // Without an SDK the span is the parent itself (a no-op span): the attempt still gets a span id of its own.
    const child = own.traceId === trace.traceId && validSpanId(own.spanId) && own.spanId !== trace.parentId;
    const headers = child
      ? traceHeaders({ ...trace, sampled: (own.traceFlags & SAMPLED) === SAMPLED }, own.spanId)
      : traceHeaders(trace, randomSpanId());
    return inSpan(
      api,
      span,
      () => send(headers),
      (result) => {
        span.setAttributes({ 'http.response.status_code': result.statusCode ?? undefined, 'webhook.attempt.outcome': result.outcome });
        if (result.outcome !== 'success') span.setStatus({ code: api.SpanStatusCode.ERROR, message: result.outcome });
      },
    );
  }

  private api(): OpenTelemetryApi | null {
    return this.openTelemetry === undefined ? installedOpenTelemetry() : this.openTelemetry;
  }
}

function remoteSpanContext(trace: TraceContext): OtelSpanContext {
  return { traceId: trace.traceId, spanId: trace.parentId, traceFlags: trace.sampled ? SAMPLED : 0, isRemote: true };
}

/** The publish span's context when it is a real one (an SDK made it), else what was given. */
function storedContext(span: OtelSpanContext, parent: TraceContext | undefined): TraceContext | undefined {
  if (!validTraceId(span.traceId) || !validSpanId(span.spanId)) return parent;
  const traceState = span.traceState?.serialize() || parent?.traceState;
  return {
    traceId: span.traceId,
    parentId: span.spanId,
    sampled: (span.traceFlags & SAMPLED) === SAMPLED,
    ...(traceState ? { traceState } : {}),
  };
}

const validTraceId = (id: string) => /^[0-9a-f]{32}$/.test(id) && !ALL_ZERO.test(id);
const validSpanId = (id: string) => /^[0-9a-f]{16}$/.test(id) && !ALL_ZERO.test(id);

function publishAttributes(info: PublishSpanInfo) {
  return { 'webhook.event.count': info.eventTypes.length, 'webhook.event.types': [...new Set(info.eventTypes)].sort() };
}

function attemptAttributes(info: AttemptSpanInfo) {
  const url = new URL(info.url);
  return {
    'http.request.method': 'POST',
    'url.scheme': url.protocol.slice(0, -1),
    'server.address': url.hostname,
    'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    'webhook.event.type': info.eventType,
    'webhook.event.id': info.eventId,
    'webhook.delivery.id': info.deliveryId,
    'webhook.attempt': info.attempt,
  };
}

/** Runs `run` in `span`: its result described on the span (when recorded), a throw recorded as an error; ends the span. */
async function inSpan<T>(api: OpenTelemetryApi, span: OtelSpan, run: () => Promise<T>, describe: (result: T) => void): Promise<T> {
  try {
    const result = await run();
    if (span.isRecording()) describe(result);
    return result;
  } catch (error) {
    failed(api, span, error);
    throw error;
  } finally {
    span.end();
  }
}

function failed(api: OpenTelemetryApi, span: OtelSpan, error: unknown): void {
  if (!span.isRecording()) return;
  span.recordException(error instanceof Error ? error : String(error));
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}
