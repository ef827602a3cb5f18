import { ApiProperty } from '../../common/api/openapi-decorators';
import type { OpenAPIObject, ParameterObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { type EventType, WEBHOOK_EVENT_TYPES } from '../../catalog/event-catalog';
import { eventComponentNames, pascalCase } from '../../event-schemas/event-schemas-openapi';
import type { EventSchemas } from '../../event-schemas/event-schemas';
import { Severity } from './severity';
import { MAX_ATTEMPTS } from '../retry-policy';

/** The JSON body of every delivery (spec 2.3): these exact bytes are what the signature covers. */
export class WebhookEventBodyDto {
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, enumName: 'WebhookEventType', example: 'RATE_SPIKE' })
  type: EventType;

  @ApiProperty({ enum: Severity, enumName: 'Severity' })
  severity: Severity;

  @ApiProperty({ example: 'USD rate spiked to 0.08% daily' })
  title: string;

  @ApiProperty({ example: 'The FRR moved from 0.02% to 0.08% in 5 minutes.' })
  body: string;

  @ApiProperty({ format: 'date-time', description: 'When the event happened (ISO-8601, UTC).' })
  createdAt: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Type-specific fields; `{}` when there are none.' })
  payload: Record<string, unknown>;

  @ApiProperty({ type: 'integer', minimum: 1, example: 42, description: 'The user the event is for.' })
  userId: number;
}

const header = (
  name: string,
  description: string,
  schema: ParameterObject['schema'],
  example?: unknown,
  required = true,
): ParameterObject => ({
  name,
  in: 'header',
  required,
  description,
  schema,
  ...(example === undefined ? {} : { example }),
});

type Webhooks = NonNullable<OpenAPIObject['webhooks']>;

/**
 * The outgoing request, as OpenAPI 3.1 `webhooks`, so receivers can generate types for it: one generic `fundingEvent`
 * (payload: any object), or with an event catalog one entry per event type that can be delivered to a webhook, named
 * after it, whose body is `<Type>Event` when the type has a schema (add {@link eventSchemaComponents} to the document's
 * component schemas).
 */
export function webhookDocumentation(eventSchemas?: EventSchemas): Webhooks {
  const catalog = eventSchemas && Object.values(eventSchemas).some((entry) => entry !== undefined) ? eventSchemas : undefined;
  if (!catalog) {
    const summary = 'A funding-automation event, POSTed to the URL the user configured for its type';
    return webhook('fundingEvent', 'receiveFundingEvent', summary, 'WebhookEventBodyDto', WEBHOOK_EVENT_TYPES);
  }
  const entries = WEBHOOK_EVENT_TYPES.map((type) => {
    const entry = catalog[type];
    const summary = entry
      ? `A ${type} event (payload schema version ${entry.version}), POSTed to the URL the user configured for ${type}`
      : `A ${type} event (no payload schema: any object), POSTed to the URL the user configured for ${type}`;
    const body = entry ? eventComponentNames(type).event : 'WebhookEventBodyDto';
    return webhook(type, `receive${pascalCase(type)}`, summary, body, [type]);
  });
  return Object.assign({}, ...entries) as Webhooks;
}

function webhook(name: string, operationId: string, summary: string, bodySchema: string, types: readonly EventType[]): Webhooks {
  return {
    [name]: {
      post: {
        operationId,
        summary,
        description:
          'Verify `X-Service-Signature` (or `webhook-signature`, with a Standard Webhooks library) over the raw request body before parsing it: ' +
          '`v1=` + lowercase hex HMAC-SHA256 of `"<X-Service-Timestamp>.<raw body>"`, keyed with the `whsec_…` secret ' +
          'shown when WEBHOOK was first enabled for the type; reject timestamps older than a few minutes. ' +
          'Answer any 2xx within 5 s. Anything else (3xx included; redirects are not followed), a timeout or a ' +
          `connection error is retried after 1 min, 5 min, 15 min, 1 h and 4 h: at most ${MAX_ATTEMPTS} attempts. ` +
          'The same event keeps its `X-Service-Event-Id` across retries and redeliveries: use it to ignore duplicates.',
        parameters: [
          header('User-Agent', 'The service and its public site.', { type: 'string' }, 'Service/0.1.0 (+https://funding.example.com)'),
          header('X-Service-Type', 'The event type, as in the body.', { type: 'string', enum: [...types] }, types[0]),
          header('X-Service-Event-Id', 'Stable id of the event: the same on every retry and redelivery.', { type: 'string' }),
          header('X-Service-Attempt', 'Attempt number within this delivery, from 1.', {
            type: 'integer',
            minimum: 1,
            maximum: MAX_ATTEMPTS,
          }),
          header(
            'X-Service-Sequence',
            "The delivery's number among the events sent to this URL for this user, given when the event was published: 1, 2, 3… " +
              'in publish order, without gaps, across event types. The same on every retry and redelivery of the event. A number ' +
              'higher than the last one seen plus one says that one is missing (still being retried, FAILED, or sent to ' +
              'another URL), a lower one that it comes late (a retry, a redelivery). Counted per URL: a new URL starts at 1. ' +
              'Not signed. Absent on test sends.',
            { type: 'integer', minimum: 1 },
            42,
            false,
          ),
          header('X-Service-Timestamp', 'Unix time in seconds when this attempt was signed.', { type: 'integer' }, 1763800000),
          header('X-Service-Signature', 'HMAC-SHA256 signature of `"<timestamp>.<raw body>"`.', {
            type: 'string',
            pattern: '^v1=[0-9a-f]{64}$',
          }),
          header('webhook-id', 'Standard Webhooks: the event id, the same as `X-Service-Event-Id`.', { type: 'string' }),
          header('webhook-timestamp', 'Standard Webhooks: the same as `X-Service-Timestamp`.', { type: 'integer' }, 1763800000),
          header(
            'webhook-signature',
            'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `"<webhook-id>.<webhook-timestamp>.<raw body>"`, keyed with the ' +
              'bytes the base64 after `whsec_` encodes; several, space-separated, during a secret rotation. Any official ' +
              'Standard Webhooks library verifies it.',
            { type: 'string', pattern: '^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)*$' },
          ),
          header(
            'traceparent',
            "W3C Trace Context, only when the event was published in a trace: the trace id of the publish, this attempt's own " +
              'span id (a new one per attempt), the sampled flag. Not signed: use it to join the trace, never to decide anything.',
            { type: 'string', pattern: '^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$' },
            '00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01',
            false,
          ),
          header(
            'tracestate',
            'W3C Trace Context vendor data, as the publisher sent it, when it sent one with its `traceparent`. Not signed.',
            { type: 'string' },
            'rojo=00f067aa0ba902b7',
            false,
          ),
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: `#/components/schemas/${bodySchema}` } } },
        },
        responses: {
          '2XX': { description: 'Delivered. The body is ignored (at most 1 KiB is kept in the delivery log).' },
          default: { description: 'Failed: the attempt is retried on the schedule above.' },
        },
      },
    },
  };
}
