import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import {
  type Attributes,
  type AttributeValue,
  type Context,
  context,
  type ContextManager,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  type SpanKind,
  type SpanOptions,
  type SpanStatus,
  type Tracer,
  type TracerProvider,
  trace,
} from '@opentelemetry/api';

/** A span as the recording tracer kept it. */
export class RecordedSpan implements Span {
  readonly attributes: Attributes;
  status: SpanStatus = { code: 0 };
  ended = false;
  readonly exceptions: unknown[] = [];

  constructor(
    readonly name: string,
    readonly kind: SpanKind | undefined,
    private readonly context: SpanContext,
    readonly parentSpanId: string | undefined,
    readonly scope: { name: string; version?: string },
    attributes: Attributes = {},
  ) {
    this.attributes = { ...attributes };
  }

  spanContext(): SpanContext {
    return this.context;
  }
  setAttribute(key: string, value: AttributeValue): this {
    this.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    for (const [key, value] of Object.entries(attributes)) if (value !== undefined) this.attributes[key] = value;
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(): this {
    return this;
  }
  addLinks(): this {
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.status = status;
    return this;
  }
  updateName(): this {
    return this;
  }
  end(): void {
    this.ended = true;
  }
  isRecording(): boolean {
    return !this.ended;
  }
  recordException(exception: unknown): void {
    this.exceptions.push(exception);
  }
}

/**
 * The smallest tracer that records: enough to check what the module traces without an OpenTelemetry SDK. Spans are
 * children of the span in the context given (or the active one), in its trace; a span without a parent starts a trace.
 */
export class RecordingTracerProvider implements TracerProvider {
  readonly spans: RecordedSpan[] = [];

  getTracer(name: string, version?: string): Tracer {
    const startSpan = (spanName: string, options: SpanOptions = {}, parentContext: Context = context.active()): Span => {
      const parent = trace.getSpanContext(parentContext);
      const spanContext = {
        traceId: parent?.traceId ?? randomBytes(16).toString('hex'),
        spanId: randomBytes(8).toString('hex'),
        traceFlags: parent?.traceFlags ?? 1,
        traceState: parent?.traceState,
      };
      const span = new RecordedSpan(spanName, options.kind, spanContext, parent?.spanId, { name, version }, options.attributes);
      this.spans.push(span);
      return span;
    };
    return {
      startSpan,
      startActiveSpan: (() => {
        throw new Error('not used by the module');
      }) as Tracer['startActiveSpan'],
    };
  }

  named(name: string): RecordedSpan[] {
    return this.spans.filter((span) => span.name === name);
  }
}

/** `context.active()` carried through async calls, as an SDK's context manager does. */
export class AsyncLocalContextManager implements ContextManager {
  private readonly storage = new AsyncLocalStorage<Context>();

  active(): Context {
    return this.storage.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.storage.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(_context: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.storage.disable();
    return this;
  }
}

/** Registers a recording provider and a context manager globally, as a host's SDK would; `unregister` undoes both. */
export function registerRecordingTracer(): { provider: RecordingTracerProvider; unregister(): void } {
  const provider = new RecordingTracerProvider();
  trace.setGlobalTracerProvider(provider);
  context.setGlobalContextManager(new AsyncLocalContextManager());
  return {
    provider,
    unregister() {
      trace.disable();
      context.disable();
    },
  };
}
