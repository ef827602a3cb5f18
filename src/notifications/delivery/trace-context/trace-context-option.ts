import { InvalidFieldsException } from '../../common/api/api-errors';
import { parseTraceparent, parseTracestate, type TraceContext } from './trace-context';

/**
 * The `traceparent` and `tracestate` options of an in-process publish. Unlike the headers of the internal endpoint
 * (ignored when invalid, as W3C says receivers do), an invalid option is the caller's bug: a 400 naming it.
 */
export function traceContextOption(traceparent: string | undefined, tracestate: string | undefined): TraceContext | undefined {
  if (traceparent === undefined) {
    if (tracestate !== undefined) throw InvalidFieldsException.of('tracestate', 'is taken only with traceparent');
    return undefined;
  }
  const parent = typeof traceparent === 'string' ? parseTraceparent(traceparent) : null;
  if (parent === null)
    throw InvalidFieldsException.of(
      'traceparent',
      'must be a W3C traceparent: 00-<trace-id>-<parent-id>-<trace-flags>, in lowercase hex of 32, 16 and 2 digits, ids not all zero',
    );
  if (tracestate === undefined) return parent;
  const traceState = typeof tracestate === 'string' ? parseTracestate(tracestate) : null;
  if (traceState === null)
    throw InvalidFieldsException.of('tracestate', 'must be a W3C tracestate: 1 to 32 comma-separated key=value members, keys unique');
  return { ...parent, traceState };
}
