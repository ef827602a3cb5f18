import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ReceivedRequest } from '@funding/notification-webhooks/testing';
import { TRACER_NAME } from '../../src/notifications/delivery/trace-context/delivery-tracing';
import { WebhookEvent } from '../../src/notifications/delivery/entities/webhook-event.entity';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { registerRecordingTracer, type RecordingTracerProvider } from '../support/recording-tracer';

// With an OpenTelemetry SDK registered (here a recording tracer through @opentelemetry/api, which is all the module
// talks to), a publish is a span and each attempt a child span of it, named in the traceparent the receiver gets.
const MINUTE = 60_000;
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

const spanIdSent = (request: ReceivedRequest) => String(request.headers.traceparent).split('-')[2];

describeEachDatabase('OpenTelemetry spans on $name', (kind) => {
  let tracing: { provider: RecordingTracerProvider; unregister(): void };
  // Registered before the app starts and removed after it closed (after hooks run in reverse order).
  beforeAll(() => {
    tracing = registerRecordingTracer();
  });
  afterAll(() => tracing.unregister());
  const t = appWithKitPerSuite(kind);
  let user = 0;
  let userId: number;

  beforeEach(async () => {
    userId = ++user;
    t.receiver.clear();
    tracing.provider.spans.length = 0;
    await t.enableWebhook(userId, 'LOAN_EXECUTED', `/u${userId}/hook?token=secret-in-the-query`);
  });

  const event = () => ({ userId, type: 'LOAN_EXECUTED', severity: 'INFO', title: 'Loan executed', body: '1000 USD' });

  it('records a publish span under the given traceparent and one attempt span per attempt, the one each traceparent names', async () => {
    t.receiver.respondNext([{ status: 503 }]);
    const published = await t.publish(event()).set('traceparent', `00-${TRACE_ID}-${PARENT_ID}-01`).expect(202);
    const [first] = await t.waitForDelivery({ userId });
    t.advance(MINUTE);
    await t.runScheduler();
    const [, second] = await t.waitForDelivery({ userId, count: 2 });

    const [publish] = tracing.provider.named('webhook publish');
    expect(publish).toMatchObject({ kind: SpanKind.PRODUCER, parentSpanId: PARENT_ID, ended: true, scope: { name: TRACER_NAME } });
    expect(publish.spanContext().traceId).toBe(TRACE_ID);
    expect(publish.attributes).toEqual({
      'webhook.event.count': 1,
      'webhook.event.types': ['LOAN_EXECUTED'],
      'webhook.queued_deliveries': 1,
      'webhook.replayed': false,
    });
    // The event stores the publish span: its attempts (on any instance, hours later) are children of it.
    const stored = await t.dataSource.getRepository(WebhookEvent).findOneByOrFail({ id: published.body.eventIds[0] });
    expect(stored.traceparent).toBe(`00-${TRACE_ID}-${publish.spanContext().spanId}-01`);

    const attempts = tracing.provider.named('webhook attempt');
    expect(attempts).toHaveLength(2);
    expect(attempts.map(spanIdOf)).toEqual([first, second].map(spanIdSent));
    for (const [index, span] of attempts.entries()) {
      expect(span).toMatchObject({ kind: SpanKind.CLIENT, parentSpanId: publish.spanContext().spanId, ended: true });
      expect(span.spanContext().traceId).toBe(TRACE_ID);
      expect(span.attributes).toEqual({
        'http.request.method': 'POST',
        'url.scheme': 'https',
        'server.address': '127.0.0.1',
        'server.port': t.receiver.port,
        'webhook.event.type': 'LOAN_EXECUTED',
        'webhook.event.id': published.body.eventIds[0],
        'webhook.delivery.id': expect.any(Number),
        'webhook.attempt': index + 1,
        'http.response.status_code': [503, 204][index],
        'webhook.attempt.outcome': ['http_error', 'success'][index],
      });
    }
    expect(attempts.map((span) => span.status.code)).toEqual([SpanStatusCode.ERROR, SpanStatusCode.UNSET]);
    // Never the URL's path or query: they may carry a token.
    expect(JSON.stringify(tracing.provider.spans.map((span) => span.attributes))).not.toMatch(/token|\/hook/);
  });

  it('makes an in-process publish a child of the active span when no traceparent is given', async () => {
    const parent = trace.getTracer('host').startSpan('host request');
    await context.with(trace.setSpan(ROOT_CONTEXT, parent), () => t.publisher.publish(event() as never));
    const [request] = await t.waitForDelivery({ userId });
    const [publish] = tracing.provider.named('webhook publish');
    expect(publish.parentSpanId).toBe(parent.spanContext().spanId);
    expect(publish.spanContext().traceId).toBe(parent.spanContext().traceId);
    const [attempt] = tracing.provider.named('webhook attempt');
    expect(request.headers.traceparent).toBe(`00-${parent.spanContext().traceId}-${attempt.spanContext().spanId}-01`);
  });

  it('starts a trace at the publish when nothing traces it yet', async () => {
    await t.publish(event()).expect(202);
    const [request] = await t.waitForDelivery({ userId });
    const [publish] = tracing.provider.named('webhook publish');
    expect(publish.parentSpanId).toBeUndefined();
    const [attempt] = tracing.provider.named('webhook attempt');
    expect(attempt.parentSpanId).toBe(publish.spanContext().spanId);
    expect(request.headers.traceparent).toBe(`00-${publish.spanContext().traceId}-${attempt.spanContext().spanId}-01`);
  });
});

function spanIdOf(span: { spanContext(): { spanId: string } }): string {
  return span.spanContext().spanId;
}
