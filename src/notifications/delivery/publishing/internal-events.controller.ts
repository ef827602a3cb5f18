import { Body, Controller, HttpCode, HttpStatus, Inject, Logger, Post, Req, UseFilters, UseGuards } from '@nestjs/common';
import type { Request } from 'express';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiExtraModels,
  ApiHeader,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
  getSchemaPath,
} from '../../common/api/openapi-decorators';
import { ApiErrorResponses, RETRY_AFTER_HEADER } from '../../common/api/api-error-responses.decorator';
import { ApiRoleGuard } from '../../common/api/api-role.guard';
import { ApiExceptionFilter } from '../../common/api/api-exception.filter';
import { isDatabaseUnavailable } from '../../common/database/database-errors';
import { DeadlineExceededError, type LateOutcome, withDeadline } from './publish-deadline/deadline';
import { ErrorResponseDto } from '../../common/api/error-response.dto';
import { JsonBodyGuard } from '../../common/api/json-body.guard';
import { publishTimeoutMs } from './publish-deadline/publish-timeout';
import { RetryLaterException, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../../common/api/retry-later.exception';
import { validatedDto } from '../../common/api/validation.pipe';
import { NOTIFICATIONS_OPTIONS } from '../../notifications.module-definition';
import type { NotificationsModuleOptions } from '../../notifications-options.interface';
import { PublishEventDto, PublishEventsDto, PublishResultDto } from './dto/publish-event.dto';
import { internalTokenScope, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency/idempotency-key';
import { InternalTokenGuard } from './internal-token.guard';
import { MAX_TRACESTATE_LENGTH, receivedTraceContext } from '../trace-context/trace-context';
import { type PublishScope, WebhookPublisher } from './webhook-publisher.service';

@ApiTags('Internal')
@ApiBearerAuth('internal')
@ApiExtraModels(PublishEventDto, PublishEventsDto)
@Controller('api/v1/internal/notifications/events')
@UseGuards(ApiRoleGuard, InternalTokenGuard, JsonBodyGuard)
@UseFilters(ApiExceptionFilter)
export class InternalEventsController {
  private readonly logger = new Logger('Notifications');
  private readonly timeoutMs: number;
  /** Keys sent here belong to the internal token: another token (another producer, or after a rotation) has keys of its own. */
  private readonly producer: PublishScope;

  constructor(
    private readonly publisher: WebhookPublisher,
    @Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions,
  ) {
    this.timeoutMs = publishTimeoutMs(options);
    this.producer = { scope: internalTokenScope(options.internalApiToken ?? ''), keyField: 'Idempotency-Key' };
  }

  @Post()
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({
    operationId: 'publishEvents',
    summary: 'Publish one event, or up to 1000 as {events: [...]}',
    description:
      'For other services; `Authorization: Bearer <INTERNAL_API_TOKEN>`. 404 when no token is configured. ' +
      '202 means every event is durably queued. 503 with `Retry-After` means nothing was acknowledged (the database is ' +
      'down, or did not commit within the publish deadline, 5 s by default): send the same request again later. ' +
      'A write that still commits after a 503 is delivered too: send an `Idempotency-Key` and retry with the same key and ' +
      "body, and the retry answers the first call's event ids (`replayed: true`) instead of publishing the events again. " +
      'Without a key, a retry after a 503 or a lost answer may deliver an event twice, under two event ids.',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH, pattern: '^[\\x21-\\x7E]+$' },
    description:
      `One key per request (the whole batch), 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters, e.g. a UUID made once ` +
      'and kept for every retry of that request. Within 24 h (`RETENTION_IDEMPOTENCY_KEY_HOURS`), the same key with the same ' +
      "events answers 202 with the first call's `eventIds` and `queuedDeliveries` and `replayed: true`, storing and sending " +
      'nothing new, on any instance; with other events it answers 409. A call made while the first is still committing waits ' +
      'for it and answers its result (or 503 when that takes longer than the publish deadline; retry). Keys belong to the ' +
      'bearer token: another token never sees them. The events compare as JSON values (payload key order and the spelling ' +
      "of `createdAt` aside); an event without `createdAt` takes the first call's publish time.",
  })
  @ApiHeader({
    name: 'traceparent',
    required: false,
    schema: { type: 'string', pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$' },
    example: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    description:
      'W3C Trace Context (level 1): the span that publishes. Every attempt of these events (retries, redeliveries and ' +
      'recoveries included) sends a `traceparent` with the same trace id, a span id of its own per attempt (a child span of ' +
      'the publish) and the same sampled flag, so receivers can join the trace. Parsed as W3C says: version `00` exactly ' +
      '(lowercase hex, trace id and parent id not all zero; the flags other than sampled are sent as zero), a later version ' +
      'by its version 00 fields. An invalid value is ignored, as W3C tells receivers to do (the publish goes on, untraced), never a 400.',
  })
  @ApiHeader({
    name: 'tracestate',
    required: false,
    schema: { type: 'string' },
    example: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
    description:
      'W3C Trace Context vendor data, taken only with a valid `traceparent` and forwarded unchanged with every attempt. ' +
      `Invalid: ignored. Longer than ${MAX_TRACESTATE_LENGTH} characters: cut as W3C says (members over 128 characters ` +
      'first, then from the end).',
  })
  @ApiBody({ schema: { oneOf: [{ $ref: getSchemaPath(PublishEventDto) }, { $ref: getSchemaPath(PublishEventsDto) }] } })
  @ApiAcceptedResponse({ type: PublishResultDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto })
  @ApiUnauthorizedResponse({ type: ErrorResponseDto })
  @ApiConflictResponse({
    type: ErrorResponseDto,
    description: 'The `Idempotency-Key` was used within its window for different events; nothing was stored. Use a new key.',
  })
  @ApiErrorResponses(404, 413, 415, 429, 500)
  @ApiServiceUnavailableResponse({
    type: ErrorResponseDto,
    description: 'Not acknowledged: the database is unavailable or did not commit in time; retry after `Retry-After` seconds.',
    headers: RETRY_AFTER_HEADER,
  })
  // The header is read from the request, not with @Headers(): Swagger would document it a second time, as required.
  async publish(@Body() body: unknown, @Req() request: Request): Promise<PublishResultDto> {
    const idempotencyKey = request.headers['idempotency-key'] as string | undefined; // a repeated header is refused (400) as a key
    const trace = receivedTraceContext(headerValue(request, 'traceparent'), headerValue(request, 'tracestate')) ?? undefined;
    const batch = typeof body === 'object' && body !== null && 'events' in body;
    // Checked as the validation pipe checks other bodies, without its copy of every event (see validatedDto).
    const events = batch ? validatedDto(PublishEventsDto, body).events : [validatedDto(PublishEventDto, body)];
    try {
      return await withDeadline(
        // A bare event's fields are named as its other errors name them: `payload.amount`, not `events[0].payload.amount`.
        this.publisher.publishValidated(this.producer, events, { idempotencyKey, trace, eventPath: batch ? undefined : () => '' }),
        this.timeoutMs,
        (outcome) => this.logLate(events.length, outcome),
      );
    } catch (error) {
      if (!(error instanceof DeadlineExceededError)) throw error;
      this.logger.warn(`Publish of ${events.length} event(s) not committed within ${this.timeoutMs} ms; answered 503`);
      throw new RetryLaterException(
        `The events could not be queued within ${this.timeoutMs} ms (the database is slow or unavailable); nothing was acknowledged: retry after ${UNAVAILABLE_RETRY_AFTER_SECONDS} s`,
      );
    }
  }

  // The publisher's write goes on after a 503: say how it ended, since its events are delivered if it committed.
  private logLate(events: number, outcome: LateOutcome<PublishResultDto>): void {
    if (outcome.ok) {
      this.logger.warn(
        `A publish answered 503 committed afterwards: ${outcome.value.queuedDeliveries} delivery(ies) of ${events} event(s) will be sent`,
      );
    } else {
      const cause = isDatabaseUnavailable(outcome.error) ? 'the database is unavailable' : 'it failed';
      this.logger.warn(
        `A publish answered 503 did not commit afterwards either (${cause}): ${(outcome.error as Error)?.message ?? String(outcome.error)}`,
      );
    }
  }
}

/** A request header's value; Node joins a repeated one with commas (a repeated `traceparent` is then invalid, and ignored). */
function headerValue(request: Request, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}
