import { Body, Controller, HttpCode, HttpStatus, Inject, Logger, Post, UseFilters, UseGuards } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiExtraModels,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
  getSchemaPath,
} from '../common/openapi-decorators';
import { ApiErrorResponses, RETRY_AFTER_HEADER } from '../common/api-error-responses.decorator';
import { ApiRoleGuard } from '../common/api-role.guard';
import { ApiExceptionFilter } from '../common/api-exception.filter';
import { isDatabaseUnavailable } from '../common/database-errors';
import { DeadlineExceededError, type LateOutcome, withDeadline } from '../common/deadline';
import { ErrorResponseDto } from '../common/error-response.dto';
import { JsonBodyGuard } from '../common/json-body.guard';
import { publishTimeoutMs } from '../common/publish-timeout';
import { RetryLaterException, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../common/retry-later.exception';
import { createValidationPipe } from '../common/validation.pipe';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { PublishEventDto, PublishEventsDto, PublishResultDto } from './dto/publish-event.dto';
import { InternalTokenGuard } from './internal-token.guard';
import { WebhookPublisher } from './webhook-publisher';

const validation = createValidationPipe();

@ApiTags('Internal')
@ApiBearerAuth('internal')
@ApiExtraModels(PublishEventDto, PublishEventsDto)
@Controller('api/v1/internal/notifications/events')
@UseGuards(ApiRoleGuard, InternalTokenGuard, JsonBodyGuard)
@UseFilters(ApiExceptionFilter)
export class InternalEventsController {
  private readonly logger = new Logger('Notifications');
  private readonly timeoutMs: number;

  constructor(
    private readonly publisher: WebhookPublisher,
    @Inject(NOTIFICATIONS_OPTIONS) options: NotificationsModuleOptions,
  ) {
    this.timeoutMs = publishTimeoutMs(options);
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
      'A write that still commits after a 503 is delivered too, so a retry may deliver an event twice (at least once).',
  })
  @ApiBody({ schema: { oneOf: [{ $ref: getSchemaPath(PublishEventDto) }, { $ref: getSchemaPath(PublishEventsDto) }] } })
  @ApiAcceptedResponse({ type: PublishResultDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto })
  @ApiUnauthorizedResponse({ type: ErrorResponseDto })
  @ApiErrorResponses(404, 413, 415, 429, 500)
  @ApiServiceUnavailableResponse({
    type: ErrorResponseDto,
    description: 'Not acknowledged: the database is unavailable or did not commit in time; retry after `Retry-After` seconds.',
    headers: RETRY_AFTER_HEADER,
  })
  async publish(@Body() body: unknown): Promise<PublishResultDto> {
    const batch = typeof body === 'object' && body !== null && 'events' in body;
    const metatype = batch ? PublishEventsDto : PublishEventDto;
    const dto = await validation.transform(body, { type: 'body', metatype });
    const events = batch ? (dto as PublishEventsDto).events : [dto as PublishEventDto];
    try {
      return await withDeadline(this.publisher.publishMany(events), this.timeoutMs, (outcome) => this.logLate(events.length, outcome));
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
