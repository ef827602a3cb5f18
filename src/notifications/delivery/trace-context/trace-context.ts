import { randomBytes } from 'node:crypto';

/**
 * A W3C Trace Context (level 1) stored with an event: the trace its deliveries join. Each attempt is a child span of
 * `parentId` (the publish span, or the producer's span when no OpenTelemetry SDK made one).
 */
export interface TraceContext {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** 16 lowercase hex digits, not all zero: the span the attempts are children of. */
  readonly parentId: string;
  /** Whether the trace is sampled: the only trace flag level 1 defines (the others are sent as zero, as it says). */
  readonly sampled: boolean;
  /** The `tracestate` to forward unchanged, when one came with it (list members joined by commas). */
  readonly traceState?: string;
}

const SAMPLED = 0x01;
const VERSION_00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
// A later version: the fields of version 00 first, then (only after a dash) whatever that version adds.
const LATER_VERSION = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(?:-.*)?$/;
const ALL_ZERO = /^0+$/;

/** The longest `tracestate` forwarded: W3C asks to propagate at least 512 characters, and says how to cut a longer one. */
export const MAX_TRACESTATE_LENGTH = 512;
const MAX_TRACESTATE_MEMBERS = 32;
const LONG_MEMBER = 128;
const TRACESTATE_KEY = /^(?:[a-z][a-z0-9_\-*/]{0,255}|[a-z0-9][a-z0-9_\-*/]{0,240}@[a-z][a-z0-9_\-*/]{0,13})$/;
const TRACESTATE_VALUE = /^[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;
const OPTIONAL_WHITESPACE = /^[ \t]+|[ \t]+$/g;

/**
 * A `traceparent` value parsed as W3C Trace Context level 1 says: version 00 exactly (`00-<trace-id>-<parent-id>-<flags>`,
 * lowercase hex, ids not all zero); a later version (01 to fe) by its version 00 fields, what follows them ignored; version
 * ff, upper case, other lengths or all-zero ids: null.
 */
export function parseTraceparent(value: string): Omit<TraceContext, 'traceState'> | null {
  const match = value.startsWith('00-') ? VERSION_00.exec(value) : LATER_VERSION.exec(value);
  if (!match) return null;
  const [traceId, parentId, flags] = match.slice(-3);
  if (value.startsWith('ff-') || ALL_ZERO.test(traceId) || ALL_ZERO.test(parentId)) return null;
  return { traceId, parentId, sampled: (parseInt(flags, 16) & SAMPLED) === SAMPLED };
}

/**
 * A `tracestate` value checked as W3C Trace Context level 1 says (list members `key=value`, at most 32, keys unique;
 * empty members dropped), with members joined by plain commas; null when it is invalid (then it is not forwarded at
 * all). Longer than {@link MAX_TRACESTATE_LENGTH}: members longer than 128 characters go first, then members from the
 * end, until it fits.
 */
export function parseTracestate(value: string): string | null {
  const members = value
    .split(',')
    .map((member) => member.replace(OPTIONAL_WHITESPACE, ''))
    .filter((member) => member.length > 0);
  if (members.length === 0 || members.length > MAX_TRACESTATE_MEMBERS) return null;
  const keys = new Set<string>();
  for (const member of members) {
    const equals = member.indexOf('=');
    const key = member.slice(0, equals);
    if (equals < 0 || !TRACESTATE_KEY.test(key) || !TRACESTATE_VALUE.test(member.slice(equals + 1)) || keys.has(key)) return null;
    keys.add(key);
  }
  return withinLength(members);
}

function withinLength(members: string[]): string | null {
  const length = (list: readonly string[]) => list.join(',').length;
  let kept = members;
  if (length(kept) > MAX_TRACESTATE_LENGTH) kept = kept.filter((member) => member.length <= LONG_MEMBER);
  while (length(kept) > MAX_TRACESTATE_LENGTH) kept = kept.slice(0, -1);
  return kept.length === 0 ? null : kept.join(',');
}

/** `traceparent` and `tracestate` as received in request headers: null when `traceparent` is missing or invalid, which W3C says to ignore. */
export function receivedTraceContext(traceparent: string | undefined, tracestate: string | undefined): TraceContext | null {
  const parent = traceparent === undefined ? null : parseTraceparent(traceparent);
  if (parent === null) return null;
  const traceState = tracestate === undefined ? null : parseTracestate(tracestate);
  return traceState === null ? parent : { ...parent, traceState };
}

/** The version 00 `traceparent` of a span of this trace. */
export function formatTraceparent(trace: Pick<TraceContext, 'traceId' | 'sampled'>, spanId: string): string {
  return `00-${trace.traceId}-${spanId}-${trace.sampled ? '01' : '00'}`;
}

/** A new span id: 8 random bytes in lowercase hex, never all zero. */
export function randomSpanId(): string {
  for (;;) {
    const id = randomBytes(8).toString('hex');
    if (!ALL_ZERO.test(id)) return id;
  }
}

/** The headers of a request made as a child span `spanId` of `trace`: `traceparent`, and `tracestate` when the trace has one. */
export function traceHeaders(trace: TraceContext, spanId: string): Record<string, string> {
  const headers: Record<string, string> = { traceparent: formatTraceparent(trace, spanId) };
  if (trace.traceState !== undefined) headers.tracestate = trace.traceState;
  return headers;
}
