import { Body, Controller, HttpCode, HttpStatus, Post, UseFilters, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBadRequestResponse, ApiBearerAuth, ApiBody, ApiExtraModels, ApiOperation, ApiTags, ApiUnauthorizedResponse, getSchemaPath } from '@nestjs/swagger';
import { ApiErrorResponses } from '../common/api-error-responses.decorator';
import { ApiExceptionFilter } from '../common/api-exception.filter';
import { ErrorResponseDto } from '../common/error-response.dto';
import { JsonBodyGuard } from '../common/json-body.guard';
import { createValidationPipe } from '../common/validation.pipe';
import { PublishEventDto, PublishEventsDto, PublishResultDto } from './dto/publish-event.dto';
import { InternalTokenGuard } from './internal-token.guard';
import { WebhookPublisher } from './webhook-publisher';

const validation = createValidationPipe();

@ApiTags('Internal')
@ApiBearerAuth('internal')
@ApiExtraModels(PublishEventDto, PublishEventsDto)
@Controller('api/v1/internal/notifications/events')
@UseGuards(InternalTokenGuard, JsonBodyGuard)
@UseFilters(ApiExceptionFilter)
export class InternalEventsController {
  constructor(private readonly publisher: WebhookPublisher) {}

  @Post()
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({
    summary: 'Publish one event, or up to 1000 as {events: [...]}',
    description: 'For other services; `Authorization: Bearer <INTERNAL_API_TOKEN>`. 404 when no token is configured.',
  })
  @ApiBody({ schema: { oneOf: [{ $ref: getSchemaPath(PublishEventDto) }, { $ref: getSchemaPath(PublishEventsDto) }] } })
  @ApiAcceptedResponse({ type: PublishResultDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto })
  @ApiUnauthorizedResponse({ type: ErrorResponseDto })
  @ApiErrorResponses(404, 413, 415, 500)
  async publish(@Body() body: unknown): Promise<PublishResultDto> {
    const batch = typeof body === 'object' && body !== null && 'events' in body;
    const metatype = batch ? PublishEventsDto : PublishEventDto;
    const dto = await validation.transform(body, { type: 'body', metatype });
    return batch ? this.publisher.publishMany((dto as PublishEventsDto).events) : this.publisher.publish(dto as PublishEventDto);
  }
}
