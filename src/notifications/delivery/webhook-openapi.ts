import { ApiProperty } from '../common/openapi-decorators';
import type { OpenAPIObject, ParameterObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { type EventType, WEBHOOK_EVENT_TYPES } from '../catalog/event-catalog';
import { Severity } from './dto/publish-event.dto';
import { MAX_ATTEMPTS } from './retry-policy';

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

const header = (name: string, description: string, schema: ParameterObject['schema'], example?: unknown): ParameterObject => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
  ...(example === undefined ? {} : { example }),
});

/** The outgoing request, as an OpenAPI 3.1 `webhooks` entry, so receivers can generate types for it. */
export function webhookDocumentation(): NonNullable<OpenAPIObject['webhooks']> {
  return {
    fundingEvent: {
      post: {
        operationId: 'receiveFundingEvent',
        summary: 'A funding-automation event, POSTed to the URL the user configured for its type',
        description:
          'Verify `X-Service-Signature` over the raw request body before parsing it: ' +
          '`v1=` + lowercase hex HMAC-SHA256 of `"<X-Service-Timestamp>.<raw body>"`, keyed with the `whsec_…` secret ' +
          'shown when WEBHOOK was first enabled for the type; reject timestamps older than a few minutes. ' +
          'Answer any 2xx within 5 s. Anything else (3xx included; redirects are not followed), a timeout or a ' +
          `connection error is retried after 1 min, 5 min, 15 min, 1 h and 4 h: at most ${MAX_ATTEMPTS} attempts. ` +
          'The same event keeps its `X-Service-Event-Id` across retries and redeliveries: use it to ignore duplicates.',
        parameters: [
          header('User-Agent', 'The service and its public site.', { type: 'string' }, 'Service/0.1.0 (+https://funding.example.com)'),
          header('X-Service-Type', 'The event type, as in the body.', { type: 'string', enum: [...WEBHOOK_EVENT_TYPES] }, 'RATE_SPIKE'),
          header('X-Service-Event-Id', 'Stable id of the event: the same on every retry and redelivery.', { type: 'string' }),
          header('X-Service-Attempt', 'Attempt number within this delivery, from 1.', {
            type: 'integer',
            minimum: 1,
            maximum: MAX_ATTEMPTS,
          }),
          header('X-Service-Timestamp', 'Unix time in seconds when this attempt was signed.', { type: 'integer' }, 1763800000),
          header('X-Service-Signature', 'HMAC-SHA256 signature of `"<timestamp>.<raw body>"`.', {
            type: 'string',
            pattern: '^v1=[0-9a-f]{64}$',
          }),
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookEventBodyDto' } } },
        },
        responses: {
          '2XX': { description: 'Delivered. The body is ignored (at most 1 KiB is kept in the delivery log).' },
          default: { description: 'Failed: the attempt is retried on the schedule above.' },
        },
      },
    },
  };
}
