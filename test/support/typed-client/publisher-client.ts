// Compiled by `npm run typecheck` against the generated types, like settings-client.ts: a producer service's client of
// the internal publish endpoint, retrying safely with an Idempotency-Key (docs/api.md, "Idempotent publish"), and passing
// its trace context on (docs/api.md, "Trace context").
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { type BodyOf, type CallResult, typedFetch } from './typed-fetch';
import type { paths } from '@funding/notification-webhooks/openapi-types';

const EVENTS = '/api/v1/internal/notifications/events';
type PublishBody = BodyOf<typeof EVENTS, 'post'>;
type PublishResult = CallResult<NonNullable<paths[typeof EVENTS]['post']>>;

/** The W3C trace context of the producer's span, e.g. from `propagation.inject(context.active(), carrier)` in OpenTelemetry. */
export interface TraceHeaders {
  traceparent: string;
  tracestate?: string;
}

/** The internal publish endpoint, for another service holding the internal API token. */
export function publisherClient(baseUrl: string, internalToken: string) {
  const call = typedFetch(baseUrl, () => ({ authorization: `Bearer ${internalToken}` }));
  const publish = (body: PublishBody, idempotencyKey?: string, trace?: TraceHeaders) =>
    call('post', EVENTS, { body, headers: { ...(idempotencyKey === undefined ? {} : { 'Idempotency-Key': idempotencyKey }), ...trace } });
  return {
    publish,
    /**
     * Publishes once, whatever happens on the way: one key for the publish, kept for every retry, so a retry after a
     * 503 (waiting `retryAfterMs`) or a lost answer answers the events already stored instead of storing them again.
     * With `trace`, the deliveries join the producer's trace (the first call that stores the events decides it).
     */
    async publishSafely(
      body: PublishBody,
      options: { key?: string; tries?: number; retryAfterMs?: number; trace?: TraceHeaders } = {},
    ): Promise<PublishResult> {
      const { key = randomUUID(), tries = 5, retryAfterMs = 5000, trace } = options;
      for (let attempt = 1; ; attempt++) {
        const result = await publish(body, key, trace).catch(() => null); // no answer: the events may or may not be stored
        if (result !== null && result.status !== 503) return result;
        if (attempt >= tries) return result ?? { ok: false, status: 0, error: { statusCode: 0, error: 'No answer', message: 'No answer' } };
        await sleep(retryAfterMs);
      }
    },
  };
}
