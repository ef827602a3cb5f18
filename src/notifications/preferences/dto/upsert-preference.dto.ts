import { ApiProperty, ApiPropertyOptional } from '../../common/api/openapi-decorators';
import { IsBoolean, IsEnum, IsOptional, IsString, MaxLength } from 'class-validator';
import { EventType, NotificationChannel } from '../../catalog/event-catalog';
import { MAX_WEBHOOK_URL_LENGTH } from '../../url-policy/webhook-url-policy';

export class UpsertPreferenceDto {
  @ApiProperty({ enum: EventType, enumName: 'EventType', example: EventType.RATE_SPIKE })
  @IsEnum(EventType, { message: 'must be a known event type' })
  type: EventType;

  @ApiProperty({ enum: NotificationChannel, enumName: 'NotificationChannel', example: NotificationChannel.WEBHOOK })
  @IsEnum(NotificationChannel, { message: `must be one of ${Object.values(NotificationChannel).join(', ')}` })
  channel: NotificationChannel;

  @ApiProperty({ example: true })
  @IsBoolean({ message: 'must be a boolean (true or false)' })
  enabled: boolean;

  @ApiPropertyOptional({
    type: String,
    format: 'uri',
    nullable: true,
    maxLength: MAX_WEBHOOK_URL_LENGTH,
    example: 'https://hooks.example.com/funding',
    description:
      'Required when enabling WEBHOOK; refused on other channels. https only, no credentials, not localhost ' +
      'nor a private, loopback, link-local or otherwise non-public address. When omitted while disabling, the stored URL is kept.',
  })
  @IsOptional()
  @IsString({ message: 'must be a string' })
  @MaxLength(MAX_WEBHOOK_URL_LENGTH, { message: `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` })
  webhookUrl?: string | null;
}
