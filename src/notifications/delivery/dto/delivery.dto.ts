import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEnum, IsInt, IsOptional, Max, Min } from 'class-validator';
import { IsRfc3339DateTime } from '../../common/rfc3339';
import { EventType } from '../../catalog/event-catalog';
import type { AttemptOutcome } from '../http/webhook-sender';
import { DeliveryStatus } from '../webhook-delivery.entity';

const ATTEMPT_OUTCOMES: readonly AttemptOutcome[] = ['success', 'http_error', 'timeout', 'connect_error', 'blocked', 'tls_error'];

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

  @ApiPropertyOptional({ type: 'integer', minimum: 1, description: 'The `nextCursor` of the previous page.' })
  @IsOptional()
  @Transform(({ value }) => (/^\d+$/.test(String(value)) ? Number(value) : value))
  @IsInt({ message: 'must be a cursor returned by a previous page' })
  cursor?: number;
}

export class DeliveryDto {
  @ApiProperty()
  id: number;

  @ApiProperty({ description: 'Stable event id, sent as X-Service-Event-Id; the same across retries and redeliveries.' })
  eventId: string;

  @ApiProperty({ enum: EventType, enumName: 'EventType' })
  type: EventType;

  @ApiProperty({ enum: DeliveryStatus, enumName: 'DeliveryStatus' })
  status: DeliveryStatus;

  @ApiProperty({ description: 'Attempts made so far (at most 6).' })
  attemptCount: number;

  @ApiProperty({ type: String, format: 'date-time', nullable: true })
  nextAttemptAt: string | null;

  @ApiProperty({ type: Number, nullable: true })
  lastStatusCode: number | null;

  @ApiProperty({ type: String, nullable: true })
  lastError: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description:
      'Why a PENDING delivery waits beyond its schedule: its endpoint stopped answering, so its deliveries are parked (not failed, no attempt used) until a probe gets an answer at `nextAttemptAt`. Null otherwise.',
    example:
      'endpoint unreachable (5 attempts in a row timed out or failed to connect); circuit open, next try at 2026-11-24T10:15:30.000Z',
  })
  waitingReason: string | null;

  @ApiProperty({ type: String, format: 'date-time' })
  createdAt: string;

  @ApiProperty({ type: String, format: 'date-time' })
  updatedAt: string;
}

export class DeliveryPageDto {
  @ApiProperty({ type: [DeliveryDto] })
  data: DeliveryDto[];

  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next (older) page; null on the last page.' })
  nextCursor: string | null;
}

export class AttemptDto {
  @ApiProperty()
  attemptNumber: number;

  @ApiProperty({ type: String, format: 'date-time' })
  startedAt: string;

  @ApiProperty()
  durationMs: number;

  @ApiProperty({ enum: ATTEMPT_OUTCOMES })
  outcome: string;

  @ApiProperty({ type: Number, nullable: true })
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
  @ApiProperty({ enum: EventType, enumName: 'EventType' })
  @IsEnum(EventType, { message: 'must be a known event type' })
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

  @ApiProperty({ type: Number, nullable: true })
  statusCode: number | null;

  @ApiProperty()
  durationMs: number;

  @ApiProperty({ type: String, nullable: true })
  error: string | null;

  @ApiProperty({ type: String, nullable: true })
  responseExcerpt: string | null;
}
