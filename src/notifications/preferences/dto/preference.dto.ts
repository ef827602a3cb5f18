import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { EventGroup, EventType, NotificationChannel } from '../../catalog/event-catalog';

export class PreferenceDto {
  @ApiProperty({ enum: EventType, enumName: 'EventType' })
  type: EventType;

  @ApiProperty({ enum: NotificationChannel, enumName: 'NotificationChannel' })
  channel: NotificationChannel;

  @ApiProperty()
  enabled: boolean;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'WEBHOOK rows only.' })
  webhookUrl?: string | null;

  @ApiPropertyOptional({ description: 'WEBHOOK rows only: true when a signing secret exists. The secret itself is never listed.' })
  hasWebhookSecret?: boolean;

  @ApiProperty({ type: String, format: 'date-time' })
  updatedAt: string;
}

export class UpsertPreferenceResponseDto extends PreferenceDto {
  @ApiPropertyOptional({
    example: 'whsec_hX1vC0m0cQ4J1s0tY2rRrKpZfI5lqGm4H0y9qkM1fZ8',
    description:
      'The signing secret, returned exactly once: in the response to the first enable of WEBHOOK for this event type. ' +
      'It cannot be retrieved later. The HMAC key is this whole string, UTF-8 encoded.',
  })
  webhookSecret?: string;
}

export enum PreferenceSource {
  DEFAULT = 'DEFAULT',
  USER = 'USER',
}

export class EffectivePreferenceDto {
  @ApiProperty({ enum: EventType, enumName: 'EventType' })
  type: EventType;

  @ApiProperty({ enum: EventGroup, enumName: 'EventGroup' })
  group: EventGroup;

  @ApiProperty({ enum: NotificationChannel, enumName: 'NotificationChannel' })
  channel: NotificationChannel;

  @ApiProperty()
  enabled: boolean;

  @ApiProperty({ enum: PreferenceSource, enumName: 'PreferenceSource', description: 'USER when an explicit preference exists.' })
  source: PreferenceSource;

  @ApiPropertyOptional({ type: String, nullable: true, description: 'WEBHOOK rows only.' })
  webhookUrl?: string | null;

  @ApiPropertyOptional({ description: 'WEBHOOK rows only.' })
  hasWebhookSecret?: boolean;
}
