import { ApiProperty, ApiPropertyOptional } from '../../../common/api/openapi-decorators';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsEnum,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
} from 'class-validator';
import { MAX_USER_ID } from '../../../auth/user-id';
import { EventType } from '../../../catalog/event-catalog';
import { MAX_JSON_DEPTH } from '../../../common/api/json-value';
import { MaxJsonBytes } from './max-json-bytes.decorator';
import { NestedDto, VerbatimJson } from '../../../common/api/raw-input';
import { IsRfc3339DateTime } from '../../../common/values/rfc3339';
import { Severity } from '../../wire/severity';

export const MAX_EVENTS_PER_REQUEST = 1000;

// Limits of one event, chosen so that every event within them fits the delivery body's cap (60,000 bytes,
// under the 65,535 of the TEXT column the body is stored in). As JSON, a control character takes 6 bytes
// (`\u0001`), and a "character" as MaxLength counts it (a surrogate pair, or a character and its variation
// selector, count one) at most 9, so: title 200 characters ≤ 1,802 bytes; body ≤ 40,000 bytes (its own
// limit, quotes included); payload ≤ 16,384 bytes; the other fields and the keys ≤ 146 bytes. 58,332 in all.
const MAX_TITLE_LENGTH = 200;
const MAX_BODY_LENGTH = 10_000;
const MAX_BODY_JSON_BYTES = 40_000;
const MAX_PAYLOAD_BYTES = 16_384;

/** A funding-automation event for one user. */
export class PublishEventDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_USER_ID, example: 42, description: 'Numeric id of the recipient.' })
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

  @ApiProperty({ example: 'USD rate spiked to 0.08% daily', maxLength: MAX_TITLE_LENGTH })
  @IsString({ message: 'must be a string' })
  @IsNotEmpty({ message: 'must not be empty' })
  @MaxLength(MAX_TITLE_LENGTH, { message: `must be at most ${MAX_TITLE_LENGTH} characters` })
  title: string;

  @ApiProperty({
    example: 'The FRR moved from 0.02% to 0.08% in 5 minutes.',
    maxLength: MAX_BODY_LENGTH,
    description:
      `At most ${MAX_BODY_LENGTH} characters and ${MAX_BODY_JSON_BYTES} bytes as a JSON string, quotes included: a control ` +
      'character takes 6 bytes there (`\\u0001`), a quote, a backslash, tab, CR or LF 2, any other character 1 to 4 (UTF-8).',
  })
  @IsString({ message: 'must be a string' })
  @MaxLength(MAX_BODY_LENGTH, { message: `must be at most ${MAX_BODY_LENGTH} characters` })
  @MaxJsonBytes(MAX_BODY_JSON_BYTES)
  body: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      `Type-specific fields; {} when omitted. Delivered exactly as published. At most ${MAX_PAYLOAD_BYTES} bytes as JSON, ` +
      `at most ${MAX_JSON_DEPTH} levels of objects and arrays (the payload itself is level 1), finite numbers only.`,
  })
  @IsOptional()
  @IsObject({ message: 'must be a JSON object' })
  @MaxJsonBytes(MAX_PAYLOAD_BYTES)
  @VerbatimJson()
  payload?: Record<string, unknown>;

  @ApiPropertyOptional({
    type: String,
    format: 'date-time',
    example: '2026-11-22T12:00:00Z',
    description:
      'When the event happened, as an RFC 3339 date-time with an offset (`Z` or `±hh:mm`); defaults to the publish time. ' +
      'Delivered as the same instant in UTC, to the millisecond.',
  })
  @IsOptional()
  @IsRfc3339DateTime()
  createdAt?: string;
}

export class PublishEventsDto {
  @ApiProperty({ type: [PublishEventDto], minItems: 1, maxItems: MAX_EVENTS_PER_REQUEST })
  @IsArray({ message: 'must be an array' })
  @ArrayMinSize(1, { message: 'must contain at least 1 event' })
  @ArrayMaxSize(MAX_EVENTS_PER_REQUEST, { message: `must contain at most ${MAX_EVENTS_PER_REQUEST} events` })
  @NestedDto(() => PublishEventDto, { each: true })
  events: PublishEventDto[];
}

export class PublishResultDto {
  @ApiProperty({ type: [String], description: 'One id per event, in order; the id is sent as X-Service-Event-Id.' })
  eventIds: string[];

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Webhook deliveries queued (events whose user has WEBHOOK enabled for the type).',
  })
  queuedDeliveries: number;

  @ApiPropertyOptional({
    type: Boolean,
    enum: [true],
    description:
      'Present (true) only when the answer is the stored result of an earlier call with the same `Idempotency-Key` and the ' +
      'same events: nothing new was stored or sent.',
  })
  replayed?: true;
}
