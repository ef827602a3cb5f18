import { Logger } from '@nestjs/common';

/**
 * The part of `@opentelemetry/api` (1.x) the module uses, written out so that the package is never needed to compile or
 * to run: a host without it pays nothing, and one with it gets spans once it registers an SDK.
 */
export interface OpenTelemetryApi {
  readonly trace: {
    getTracer(name: string, version?: string): OtelTracer;
    setSpan(context: OtelContext, span: OtelSpan): OtelContext;
    setSpanContext(context: OtelContext, spanContext: OtelSpanContext): OtelContext;
    getSpan(context: OtelContext): OtelSpan | undefined;
  };
  readonly context: {
    active(): OtelContext;
    with<T>(context: OtelContext, run: () => T): T;
  };
  readonly ROOT_CONTEXT: OtelContext;
  readonly SpanKind: { readonly PRODUCER: number; readonly CLIENT: number };
  readonly SpanStatusCode: { readonly ERROR: number };
}

/** Opaque to the module: it only hands contexts back to the API. */
export type OtelContext = object;

export type OtelAttributes = Record<string, string | number | boolean | string[] | undefined>;

export interface OtelSpanContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly isRemote?: boolean;
  readonly traceState?: { serialize(): string };
}

export interface OtelSpan {
  spanContext(): OtelSpanContext;
  isRecording(): boolean;
  setAttributes(attributes: OtelAttributes): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  end(): void;
}

export interface OtelTracer {
  startSpan(name: string, options?: { kind?: number; attributes?: OtelAttributes }, context?: OtelContext): OtelSpan;
}

/**
 * `@opentelemetry/api` when the process can load it, else null (it is nobody's dependency here: a host that traces has it).
 * Loaded on first use, never at import, and at most once.
 */
export function installedOpenTelemetry(): OpenTelemetryApi | null {
  if (loaded === undefined) loaded = requireOpenTelemetry();
  return loaded;
}

let loaded: OpenTelemetryApi | null | undefined;

function requireOpenTelemetry(): OpenTelemetryApi | null {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- optional: loaded only where installed
    return require('@opentelemetry/api') as OpenTelemetryApi;
  } catch (error) {
    const missing =
      (error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && (error as Error).message.includes("'@opentelemetry/api'");
    // Tracing never makes a publish or an attempt fail: a package that is there but does not load means no spans.
    if (!missing) new Logger('Notifications').warn(`@opentelemetry/api did not load (${(error as Error).message}): no spans`);
    return null;
  }
}
