import { Body, Get, HttpCode, HttpStatus, Param, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '../../common/api/openapi-decorators';
import { CurrentUserId } from '../../auth/current-user-id.decorator';
import { SettingsController } from '../../settings-api/settings-controller.decorator';
import { ApiErrorResponses } from '../../common/api/api-error-responses.decorator';
import { ErrorResponseDto } from '../../common/api/error-response.dto';
import { PositiveIntPipe } from './positive-int.pipe';
import { RateLimit } from '../../rate-limit/rate-limit.decorator';
import { DeliveriesService } from './deliveries.service';
import {
  DeliveryDetailDto,
  DeliveryDto,
  DeliveryPageDto,
  ListDeliveriesQueryDto,
  RecoverDeliveriesDto,
  RecoverResultDto,
  TestSendDto,
  TestSendResultDto,
} from './dto/delivery.dto';

@ApiTags('Webhook deliveries')
@SettingsController()
export class DeliveriesController {
  constructor(private readonly deliveries: DeliveriesService) {}

  @Get('webhook-deliveries')
  @ApiOperation({
    operationId: 'listDeliveries',
    summary: "The user's webhook deliveries, newest first",
    description:
      'One page of the delivery log (20 by default, at most 100), optionally of one type or status. Pass `nextCursor` ' +
      'back as `cursor` for the next, older page until it is null. Test sends are not in the log. A page examines at most ' +
      '1,000 deliveries: filtered by both type and status it may hold fewer than `limit`, even none, while `nextCursor` is ' +
      'not null; keep paging until it is null.',
  })
  @ApiOkResponse({ type: DeliveryPageDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto })
  list(@CurrentUserId() userId: number, @Query() query: ListDeliveriesQueryDto): Promise<DeliveryPageDto> {
    return this.deliveries.list(userId, query);
  }

  @Get('webhook-deliveries/:id')
  @ApiOperation({
    operationId: 'getDelivery',
    summary: 'One delivery with every attempt',
    description: 'The delivery and its attempts in order: outcome, HTTP status, duration, error and the first 1 KiB of the answer.',
  })
  @ApiOkResponse({ type: DeliveryDetailDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'No such delivery for this user.' })
  @ApiErrorResponses(400)
  @ApiParam({ name: 'id', schema: { type: 'integer', minimum: 1 } })
  detail(@CurrentUserId() userId: number, @Param('id', PositiveIntPipe) id: number): Promise<DeliveryDetailDto> {
    return this.deliveries.detail(userId, id);
  }

  @Post('webhook-deliveries/recover')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({
    operationId: 'recoverDeliveries',
    summary: 'Queue a new cycle for every delivery that ended FAILED in a time window (same event ids and bytes)',
    description:
      'For after you fixed your endpoint. Deliveries already recovered (their event has a newer delivery) are skipped, so calling again queues nothing twice. They are sent in the background behind live traffic, 100 per second per user and service instance (all your recover calls together; the recoveries of other users do not delay yours); at most 10,000 per call (`more` says when to call again).',
  })
  @ApiAcceptedResponse({ type: RecoverResultDto })
  @ApiBadRequestResponse({
    type: ErrorResponseDto,
    description: 'A bad `since`/`until`/`type`, `until` before `since`, or a window over 90 days.',
  })
  @ApiErrorResponses(413, 415)
  @RateLimit('recover')
  recover(@CurrentUserId() userId: number, @Body() body: RecoverDeliveriesDto): Promise<RecoverResultDto> {
    return this.deliveries.recover(userId, body);
  }

  @Post('webhook-deliveries/:id/redeliver')
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({
    operationId: 'redeliver',
    summary: 'Queue the same event again (same event id, new cycle of up to 6 attempts)',
    description:
      'Sends the stored event again to the current URL of its type, signed with the current secret, with the same ' +
      '`X-Service-Event-Id` (receivers deduplicate on it), as a new cycle of up to 6 attempts on the retry schedule. ' +
      'Answers the new delivery, PENDING. One cycle per event at a time: while a delivery of the event is PENDING (this ' +
      'one, or an earlier redelivery or recovery of it) the call answers 409 naming it, also when two calls arrive at once.',
  })
  @ApiAcceptedResponse({ type: DeliveryDto })
  @ApiNotFoundResponse({ type: ErrorResponseDto })
  @ApiConflictResponse({
    type: ErrorResponseDto,
    description: 'A delivery of the event is still PENDING (its retry cycle is running); redeliver once it has ended.',
  })
  @ApiErrorResponses(400, 413, 415)
  @RateLimit('redeliver')
  @ApiParam({ name: 'id', schema: { type: 'integer', minimum: 1 } })
  redeliver(@CurrentUserId() userId: number, @Param('id', PositiveIntPipe) id: number): Promise<DeliveryDto> {
    return this.deliveries.redeliver(userId, id);
  }

  @Post('webhook/test')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'sendTestEvent',
    summary: "Send one signed test event to the type's configured URL now (not stored, not retried)",
    description:
      'Signs and sends one test event (`payload: {"test": true}`, an event id starting with `test_`) to the URL saved for ' +
      'the type, enabled or not, and answers how the receiver answered. The answer is the only record: test sends are ' +
      'not stored, so they appear neither in the delivery log nor in auto-disable, and are never retried. Operators ' +
      'count them in the metric webhook_test_sends_total{outcome}, apart from the attempts of real deliveries.',
  })
  @ApiOkResponse({ type: TestSendResultDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto })
  @ApiErrorResponses(413, 415)
  @RateLimit('testSend')
  sendTest(@CurrentUserId() userId: number, @Body() body: TestSendDto): Promise<TestSendResultDto> {
    return this.deliveries.sendTest(userId, body.type);
  }
}
