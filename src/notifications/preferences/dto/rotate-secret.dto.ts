import { ApiProperty, ApiPropertyOptional } from '../../common/api/openapi-decorators';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';
import { EventType, WEBHOOK_EVENT_TYPES } from '../../catalog/event-catalog';
import { WEBHOOK_EVENT_TYPE_MESSAGE } from '../../catalog/event-type-openapi';

/** The longest overlap a rotation may ask for: a week, enough for any receiver's deploy. */
export const MAX_OVERLAP_HOURS = 168;

export class RotateSecretDto {
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, enumName: 'WebhookEventType', example: EventType.RATE_SPIKE })
  @IsIn(WEBHOOK_EVENT_TYPES, { message: WEBHOOK_EVENT_TYPE_MESSAGE })
  type: EventType;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_OVERLAP_HOURS,
    example: 24,
    description:
      'Hours during which the secret being replaced still signs the Standard Webhooks `webhook-signature` next to the new ' +
      'one (two space-separated signatures), so a receiver verifying that header switches secrets without rejecting a ' +
      'delivery. `X-Service-Signature` always carries the new secret only. 0 (the default): the old secret stops at once.',
  })
  @IsOptional()
  @IsInt({ message: 'must be an integer' })
  @Min(0, { message: 'must be at least 0' })
  @Max(MAX_OVERLAP_HOURS, { message: `must be at most ${MAX_OVERLAP_HOURS}` })
  overlapHours?: number;
}

export class RotateSigningKeyDto {
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, enumName: 'WebhookEventType', example: EventType.RATE_SPIKE })
  @IsIn(WEBHOOK_EVENT_TYPES, { message: WEBHOOK_EVENT_TYPE_MESSAGE })
  type: EventType;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_OVERLAP_HOURS,
    example: 24,
    description:
      'Hours during which the key pair being replaced still signs: `webhook-signature` carries a `v1a` signature of each ' +
      'key, so a receiver still holding the old public key verifies until it has the new one. 0 (the default): the old ' +
      'pair stops at once.',
  })
  @IsOptional()
  @IsInt({ message: 'must be an integer' })
  @Min(0, { message: 'must be at least 0' })
  @Max(MAX_OVERLAP_HOURS, { message: `must be at most ${MAX_OVERLAP_HOURS}` })
  overlapHours?: number;
}
