import { EventType } from '../catalog/event-catalog';
import { ApiProperty, ApiPropertyOptional } from '../common/api/openapi-decorators';
import type { WebhookHealthState } from '../delivery/events/delivery-events.service';
import { ATTEMPT_OUTCOMES } from '../delivery/http/attempt-result';
import { WebhookDisabledReasonCode } from '../preferences/dto/preference.dto';

export const WEBHOOK_HEALTH_STATES: readonly WebhookHealthState[] = ['HEALTHY', 'FAILING', 'CIRCUIT_OPEN', 'DISABLED', 'OFF'];

/** The PENDING deliveries counted per user at most (one index range scan); past it the counts are a lower bound. */
export const WAITING_COUNT_CAP = 10_000;

const DATE_TIME = { type: String, format: 'date-time', nullable: true } as const;

export class WebhookLastAttemptDto {
  @ApiProperty({ type: String, format: 'date-time', description: 'When the attempt started.' })
  at: string;

  @ApiProperty({ enum: ATTEMPT_OUTCOMES.filter((outcome) => outcome !== 'circuit_open') })
  outcome: string;

  @ApiProperty({ type: 'integer', nullable: true, description: 'HTTP status of the answer; null when none came.' })
  statusCode: number | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why it failed, as the delivery log says it (at most 255 characters; no header values or bodies); null on success.',
  })
  error: string | null;
}

export class OrderedHeadDto {
  @ApiProperty({ type: 'integer', minimum: 1, description: 'The delivery the others to this URL wait for (the delivery log has it).' })
  deliveryId: number;

  @ApiProperty({ enum: EventType, enumName: 'EventType' })
  type: EventType;

  @ApiProperty({ type: 'integer', minimum: 1, nullable: true, description: 'Its `X-Service-Sequence`.' })
  sequence: number | null;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Attempts made so far (of 6).' })
  attemptCount: number;

  @ApiProperty({ ...DATE_TIME, description: 'When its next attempt is due; the ones behind it wait at least until then.' })
  nextAttemptAt: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Why its last attempt failed; null before its first.' })
  lastError: string | null;
}

export class WebhookHealthDto {
  @ApiProperty({ enum: EventType, enumName: 'EventType' })
  type: EventType;

  @ApiProperty({ type: String, format: 'uri', nullable: true })
  webhookUrl: string | null;

  @ApiProperty()
  enabled: boolean;

  @ApiProperty({
    enum: WEBHOOK_HEALTH_STATES,
    enumName: 'WebhookHealthState',
    description:
      '`OFF`: the user turned the webhook off. `DISABLED`: the service turned it off (auto-disable; see `disabledReason`). ' +
      '`CIRCUIT_OPEN`: its endpoint stopped answering, attempts are skipped without a request until `circuitOpenUntil`, ' +
      'then one probe goes; a 2xx closes it. `FAILING`: at least the configured number of attempts in a row failed ' +
      '(default 3). `HEALTHY` otherwise (fewer failures show in `failedAttemptsInRow`).',
  })
  state: WebhookHealthState;

  @ApiPropertyOptional({ enum: WebhookDisabledReasonCode, enumName: 'WebhookDisabledReasonCode', description: 'With `DISABLED`.' })
  disabledReasonCode?: WebhookDisabledReasonCode;

  @ApiPropertyOptional({ description: 'With `DISABLED`: why, in English, with the figures.' })
  disabledReason?: string;

  @ApiProperty({ ...DATE_TIME, description: 'When auto-disable last turned the webhook off; null if it never did.' })
  disabledAt: string | null;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'Attempts in a row that failed since the last 2xx (skipped attempts not counted).',
  })
  failedAttemptsInRow: number;

  @ApiProperty({ ...DATE_TIME, description: 'When the first of those failed attempts started; null when there are none.' })
  failingSince: string | null;

  @ApiPropertyOptional({
    type: WebhookLastAttemptDto,
    description: 'The latest attempt that made (or was refused before) a request; absent before the first one.',
  })
  lastAttempt?: WebhookLastAttemptDto;

  @ApiProperty({ ...DATE_TIME, description: 'When the latest attempt answered with a 2xx started.' })
  lastSuccessAt: string | null;

  @ApiProperty({ ...DATE_TIME, description: 'With `CIRCUIT_OPEN`: when the next probe may go (may be past: the next attempt probes).' })
  circuitOpenUntil: string | null;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: `Deliveries of this type waiting for their next attempt (PENDING). Counted among at most ${WAITING_COUNT_CAP.toLocaleString('en-US')} of the user's waiting deliveries: past that, a lower bound.`,
  })
  waitingDeliveries: number;

  @ApiProperty({ description: "Ordered delivery is on for this webhook's URL (see `orderedDelivery` on the preference)." })
  orderedDelivery: boolean;

  @ApiPropertyOptional({
    type: OrderedHeadDto,
    description:
      "With `orderedDelivery`: the first PENDING delivery to this URL (any of the user's types that post there), which " +
      'the others wait for while it retries (up to 5 h 21 min; it lets them go once DELIVERED, FAILED or CANCELLED). ' +
      'Absent when nothing to this URL is PENDING.',
  })
  orderedHead?: OrderedHeadDto;

  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'With `orderedDelivery`: PENDING deliveries to this URL waiting behind `orderedHead` (0 otherwise).',
  })
  waitingBehind: number;
}
