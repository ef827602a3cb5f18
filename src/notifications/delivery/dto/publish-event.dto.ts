import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsEnum,
  IsInt,
  IsISO8601,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { MAX_USER_ID } from '../../auth/user-id';
import { EventType } from '../../catalog/event-catalog';
import { MaxJsonBytes } from '../../common/max-json-bytes.decorator';

export enum Severity {
  INFO = 'INFO',
  WARNING = 'WARNING',
  ERROR = 'ERROR',
}

export const MAX_EVENTS_PER_REQUEST = 1000;
const MAX_PAYLOAD_BYTES = 16_384;

/** A funding-automation event for one user. */
export class PublishEventDto {
  @ApiProperty({ example: 42, description: 'Numeric id of the recipient.' })
  @IsInt({ message: 'must be an integer' })
  @Min(1, { message: 'must be a positive integer' })
  @Max(MAX_USER_ID, { message: `must be at most ${MAX_USER_ID}` })
  userId: number;

  @ApiProperty({ enum: EventType, enumName: 'EventType' })
  @IsEnum(EventType, { message: 'must be a known event type' })
  type: EventType;

  @ApiProperty({ enum: Severity, enumName: 'Severity' })
  @IsEnum(Severity, { message: 'must be one of INFO, WARNING, ERROR' })
  severity: Severity;

  @ApiProperty({ example: 'USD rate spiked to 0.08% daily', maxLength: 200 })
  @IsString({ message: 'must be a string' })
  @IsNotEmpty({ message: 'must not be empty' })
  @MaxLength(200, { message: 'must be at most 200 characters' })
  title: string;

  @ApiProperty({ example: 'The FRR moved from 0.02% to 0.08% in 5 minutes.', maxLength: 10_000 })
  @IsString({ message: 'must be a string' })
  @MaxLength(10_000, { message: 'must be at most 10000 characters' })
  body: string;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: `Type-specific fields; {} when omitted. At most ${MAX_PAYLOAD_BYTES} bytes as JSON.` })
  @IsOptional()
  @IsObject({ message: 'must be a JSON object' })
  @MaxJsonBytes(MAX_PAYLOAD_BYTES)
  payload?: Record<string, unknown>;

  @ApiPropertyOptional({ type: String, format: 'date-time', description: 'ISO-8601 instant; defaults to the publish time.' })
  @IsOptional()
  @IsISO8601({ strict: true }, { message: 'must be an ISO-8601 instant' })
  createdAt?: string;
}

export class PublishEventsDto {
  @ApiProperty({ type: [PublishEventDto], minItems: 1, maxItems: MAX_EVENTS_PER_REQUEST })
  @IsArray({ message: 'must be an array' })
  @ArrayMinSize(1, { message: 'must contain at least 1 event' })
  @ArrayMaxSize(MAX_EVENTS_PER_REQUEST, { message: `must contain at most ${MAX_EVENTS_PER_REQUEST} events` })
  @ValidateNested({ each: true })
  @Type(() => PublishEventDto)
  events: PublishEventDto[];
}

export class PublishResultDto {
  @ApiProperty({ type: [String], description: 'One id per event, in order; the id is sent as X-Service-Event-Id.' })
  eventIds: string[];

  @ApiProperty({ description: 'Webhook deliveries queued (events whose user has WEBHOOK enabled for the type).' })
  queuedDeliveries: number;
}
