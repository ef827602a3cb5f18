import { ApiProperty, ApiPropertyOptional } from '../../../common/api/openapi-decorators';
import { Transform } from 'class-transformer';
import { IsEnum, IsIn, IsInt, IsOptional, Matches, Max, Min } from 'class-validator';
import { IsRfc3339DateTime } from '../../../common/values/rfc3339';
import { EventType, WEBHOOK_EVENT_TYPES } from '../../../catalog/event-catalog';
import { WEBHOOK_EVENT_TYPE_MESSAGE } from '../../../catalog/event-type-openapi';
import { ATTEMPT_OUTCOMES } from '../../http/attempt-result';
import { MAX_ATTEMPTS } from '../../retry-policy';
import { DeliveryStatus } from '../../entities/webhook-delivery.entity';

// Opaque to clients; today the id of the last delivery of the previous page (so numeric cursors sent before stay valid).
const CURSOR_PATTERN = /^[1-9]\d{0,14}$/;
const CURSOR_DESCRIPTION = 'Opaque: pass the `nextCursor` of the previous page unchanged.';

/** The delivery id a valid {@link ListDeliveriesQueryDto.cursor} stands for. */
export const cursorBeforeId = (cursor: string): number => Number(cursor);
/** The cursor of the page after the one that ends with this delivery. */
export const cursorAfter = (lastId: number): string => String(lastId);

export class ListDeliveriesQueryDto {
  @ApiPropertyOptional({ enum: EventType, enumName: 'EventType' })
  @IsOptional()
  @IsEnum(EventType, { message: 'must be a known event type' })
  type?: EventType;

  @ApiPropertyOptional({ enum: DeliveryStatus, enumName: 'DeliveryStatus' })
  @IsOptional()
  @IsEnum(DeliveryStatus, { message: `must be one of ${Object.values(DeliveryStatus).join(', ')}` })
  status?: DeliveryStatus;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Transform(({ value }) => (/^\d+$/.test(String(value)) ? Number(value) : value))
  @IsInt({ message: 'must be an integer' })
  @Min(1, { message: 'must be at least 1' })
  @Max(100, { message: 'must be at most 100' })
  limit?: number;

  @ApiPropertyOptional({ type: String, description: CURSOR_DESCRIPTION })
  @IsOptional()
  @Matches(CURSOR_PATTERN, { message: 'must be the nextCursor of a previous page' })
  cursor?: string;
}

export class DeliveryDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  id: number;

  @ApiProperty({ description: 'Stable event id, sent as X-Service-Event-Id; the same across retries and redeliveries.' })
  eventId: string;

  @ApiProperty({ enum: EventType, enumName: 'EventType' })
  type: EventType;

  @ApiProperty({ enum: DeliveryStatus, enumName: 'DeliveryStatus' })
  status: DeliveryStatus;

  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_ATTEMPTS, description: 'Attempts made so far (at most 6).' })
  attemptCount: number;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  nextAttemptAt: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: 'HTTP status of the last answer; null when none came.' })
  lastStatusCode: number | null;

  @ApiProperty({ type: String, nullable: true })
  lastError: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      "Why a PENDING delivery waits beyond its schedule (a recovered delivery queued behind live traffic, due at `nextAttemptAt`). Null otherwise. An attempt due while its endpoint's circuit is open is not postponed: it is recorded as a skipped attempt (outcome `circuit_open`).",
    example:
      'endpoint unreachable (5 attempts in a row timed out or failed to connect); circuit open, next try at 2026-11-24T10:15:30.000Z',
  })
  waitingReason: string | null;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    nullable: true,
    description:
      'Its number among your deliveries to the webhook URL it was published to, sent as `X-Service-Sequence`: 1, 2, 3… in ' +
      'publish order. A redelivery or recovery keeps the number of its event. Null for deliveries queued before numbering.',
  })
  sequence: number | null;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;

  @ApiProperty({ type: String, format: 'date-time' })
  updatedAt: string;
}

export class DeliveryPageDto {
  @ApiProperty({ type: [DeliveryDto] })
  data: DeliveryDto[];

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Pass unchanged as `cursor` for the next (older) page; null on the last page. Opaque: do not parse it.',
  })
  nextCursor: string | null;
}

export class AttemptDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: MAX_ATTEMPTS })
  attemptNumber: number;

  @ApiProperty({ type: String, format: 'date-time' })
  startedAt: string;

  @ApiProperty({ type: 'integer', minimum: 0 })
  durationMs: number;

  @ApiProperty({ enum: ATTEMPT_OUTCOMES })
  outcome: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'HTTP status of the answer; null when none came.' })
  statusCode: number | null;

  @ApiProperty({ type: String, nullable: true })
  error: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'First bytes (≤ 1 KiB) of the response body.' })
  responseExcerpt: string | null;
}

export class DeliveryDetailDto extends DeliveryDto {
  @ApiProperty({ type: [AttemptDto] })
  attempts: AttemptDto[];
}

export class TestSendDto {
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, enumName: 'WebhookEventType' })
  @IsIn(WEBHOOK_EVENT_TYPES, { message: WEBHOOK_EVENT_TYPE_MESSAGE })
  type: EventType;
}

export class RecoverDeliveriesDto {
  @ApiProperty({
    type: String,
    format: 'date-time',
    description: 'Deliveries that ended FAILED from this instant on (RFC 3339 with offset), at most 90 days before `until`.',
    example: '2026-11-24T08:00:00Z',
  })
  @IsRfc3339DateTime()
  since: string;

  @ApiPropertyOptional({ type: String, format: 'date-time', description: 'Up to this instant (default: now); not before `since`.' })
  @IsOptional()
  @IsRfc3339DateTime()
  until?: string;

  @ApiPropertyOptional({ enum: EventType, enumName: 'EventType', description: 'Only deliveries of this type (default: all).' })
  @IsOptional()
  @IsEnum(EventType, { message: 'must be a known event type' })
  type?: EventType;
}

export class RecoverResultDto {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Deliveries queued for a new cycle (same event ids and bytes).' })
  queued: number;

  @ApiProperty({ description: 'True when the call stopped at its limit (10,000): call again to queue the rest.' })
  more: boolean;
}

export class TestSendResultDto {
  @ApiProperty()
  success: boolean;

  @ApiProperty({ enum: ATTEMPT_OUTCOMES })
  outcome: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'HTTP status of the answer; null when none came.' })
  statusCode: number | null;

  @ApiProperty({ type: 'integer', minimum: 0 })
  durationMs: number;

  @ApiProperty({ type: String, nullable: true })
  error: string | null;

  @ApiProperty({ type: String, nullable: true })
  responseExcerpt: string | null;
}
