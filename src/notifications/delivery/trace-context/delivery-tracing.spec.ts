import * as openTelemetry from '@opentelemetry/api';
import type { AttemptResult } from '../http/attempt-result';
import { type AttemptSpanInfo, DeliveryTracing } from './delivery-tracing';
import type { OpenTelemetryApi } from './open-telemetry';
import type { TraceContext } from './trace-context';

const TRACE: TraceContext = {
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  parentId: '00f067aa0ba902b7',
  sampled: true,
  traceState: 'rojo=1',
};
const INFO: AttemptSpanInfo = {
  url: 'https://hooks.example.com/h?token=x',
  eventType: 'LOAN_EXECUTED',
  eventId: 'e1',
  deliveryId: 1,
  attempt: 1,
};
const OK: AttemptResult = { outcome: 'success', statusCode: 204, durationMs: 1, error: null, responseExcerpt: null };

/** The headers an attempt of `trace` is sent with. */
async function headersOf(tracing: DeliveryTracing, trace: TraceContext | undefined): Promise<Readonly<Record<string, string>>> {
  let sent: Readonly<Record<string, string>> = {};
  await tracing.attempt(trace, INFO, (headers) => ((sent = headers), Promise.resolve(OK)));
  return sent;
}

// Hosts without @opentelemetry/api (null), and hosts that have it without an SDK (its no-op tracer): no span is
// recorded, and the traceparent given at publish still reaches every attempt, each under a span id of its own.
describe.each([
  ['without @opentelemetry/api', null],
  ['with @opentelemetry/api and no SDK registered', openTelemetry as unknown as OpenTelemetryApi],
])('DeliveryTracing %s', (_, api) => {
  const tracing = new DeliveryTracing(api);

  it('sends each attempt a traceparent of the trace with a fresh span id, the sampled flag and the tracestate', async () => {
    const [first, second] = [await headersOf(tracing, TRACE), await headersOf(tracing, { ...TRACE, sampled: false })];
    expect(first.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
    expect(second.traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-00$/);
    const spanIds = [first, second].map((headers) => headers.traceparent.split('-')[2]);
    expect(new Set([TRACE.parentId, ...spanIds]).size).toBe(3);
    expect(first.tracestate).toBe('rojo=1');
  });

  it('sends no trace headers for an event published without a trace', async () => {
    expect(await headersOf(tracing, undefined)).toEqual({});
  });

  it('stores the given trace context with the events, and none without one', async () => {
    const stored: (TraceContext | undefined)[] = [];
    const publish = (trace: TraceContext | undefined) => (stored.push(trace), Promise.resolve({ queuedDeliveries: 1 }));
    await tracing.publish(TRACE, { eventTypes: ['LOAN_EXECUTED'] }, publish);
    await tracing.publish(undefined, { eventTypes: ['LOAN_EXECUTED'] }, publish);
    expect(stored).toEqual([TRACE, undefined]);
  });

  it('lets a failed publish or send fail as it would untraced', async () => {
    const failure = new Error('database down');
    await expect(tracing.publish(TRACE, { eventTypes: [] }, () => Promise.reject(failure))).rejects.toBe(failure);
    await expect(tracing.attempt(TRACE, INFO, () => Promise.reject(failure))).rejects.toBe(failure);
  });
});
