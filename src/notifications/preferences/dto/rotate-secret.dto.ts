import { ApiProperty } from '../../common/openapi-decorators';
import { IsEnum } from 'class-validator';
import { EventType } from '../../catalog/event-catalog';

export class RotateSecretDto {
  @ApiProperty({ enum: EventType, enumName: 'EventType', example: EventType.RATE_SPIKE })
  @IsEnum(EventType, { message: 'must be a known event type' })
  type: EventType;
}
