import { ApiProperty } from '../../common/openapi-decorators';
import { IsIn } from 'class-validator';
import { EventType, WEBHOOK_EVENT_TYPES } from '../../catalog/event-catalog';
import { WEBHOOK_EVENT_TYPE_MESSAGE } from '../../catalog/event-type-openapi';

export class RotateSecretDto {
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, enumName: 'WebhookEventType', example: EventType.RATE_SPIKE })
  @IsIn(WEBHOOK_EVENT_TYPES, { message: WEBHOOK_EVENT_TYPE_MESSAGE })
  type: EventType;
}
