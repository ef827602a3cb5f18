import { formatTraceparent, parseTraceparent, type TraceContext } from './trace-context';

/** The `traceparent` and `tracestate` columns of an event published in `trace`; nulls without one. */
export function traceColumns(trace: TraceContext | undefined): [string | null, string | null] {
  return trace ? [formatTraceparent(trace, trace.parentId), trace.traceState ?? null] : [null, null];
}

/** The trace context stored in an event's columns (they were validated before they were written). */
export function storedTraceContext(traceparent: string | null, tracestate: string | null): TraceContext | undefined {
  const parent = traceparent === null ? null : parseTraceparent(traceparent);
  if (parent === null) return undefined;
  return tracestate === null ? parent : { ...parent, traceState: tracestate };
}
