import { ApiProperty, ApiPropertyOptional } from '../../common/api/openapi-decorators';
import { EventGroup, EventType, NotificationChannel } from '../../catalog/event-catalog';
import { SignatureScheme } from '../../secrets/signature-scheme';

/** Why the service turned a webhook off: a stable code a screen can translate (`disabledReason` is the English text). */
export enum WebhookDisabledReasonCode {
  /** `autoDisableAfterFailures` deliveries of the type in a row ended FAILED. */
  CONSECUTIVE_FAILURES = 'CONSECUTIVE_FAILURES',
}

const WEBHOOK_URL_DOC = { type: String, format: 'uri', nullable: true, description: 'WEBHOOK rows only.' } as const;
const DISABLED_REASON_CODE_DOC = {
  enum: WebhookDisabledReasonCode,
  enumName: 'WebhookDisabledReasonCode',
  description:
    'WEBHOOK rows only, present while the service itself disabled the webhook: why, as a stable code to translate. ' +
    'Enabling it again clears it.',
} as const;
const DISABLED_REASON_DOC = {
  example: 'disabled after 5 consecutive failed deliveries on 2026-11-22T12:00:00.000Z',
  description: 'Present with `disabledReasonCode`: the same in English, with the figures (failures, when).',
} as const;

export const ORDERED_DELIVERY_DOC = {
  description:
    "WEBHOOK rows only: ordered delivery for this row's URL. The user's webhooks that post to one URL share it (and its " +
    '`X-Service-Sequence` count): turning it on or off for one type does it for all of them. On, a delivery to the URL ' +
    'starts only once the one before it (lower `sequence`) is DELIVERED, FAILED or CANCELLED; one that retries holds up ' +
    'the rest for as long as its retries run (up to 5 h 21 min), and a FAILED one lets the next go (the gap shows in ' +
    "`X-Service-Sequence`). See the webhook's health (`orderedDelivery`, `waitingBehind`).",
} as const;

const SIGNATURE_SCHEMES_DOC = {
  enum: SignatureScheme,
  enumName: 'SignatureScheme',
  isArray: true,
  example: ['hmac', 'ed25519'],
  description:
    'WEBHOOK rows only: which schemes sign its deliveries. `hmac` (the default): `X-Service-Signature` and the Standard ' +
    'Webhooks `v1,` signature, with the signing secret. `ed25519`: the Standard Webhooks `v1a,` signature, with the ' +
    "webhook's private key, verified with `signingPublicKey`. Both: every signature is sent.",
} as const;
const SIGNING_PUBLIC_KEY_DOC = {
  example: 'whpk_FLCTO+FlSFv2PDkGs2Ma3XnowfB7Mx4Sb4X3elqWa1c=',
  description:
    'WEBHOOK rows with a key pair (made when `ed25519` is first chosen): the Ed25519 public key in the Standard Webhooks ' +
    'format, `whpk_` and the raw 32-byte key in base64. Receivers verify `v1a` signatures with it alone; it is not a secret. ' +
    'The private key is never returned.',
} as const;
const PREVIOUS_PUBLIC_KEY_DOC = {
  description:
    "Present during a key rotation's overlap only: the public key before it, whose private key still signs `v1a` next to " +
    'the new one until `previousSigningPublicKeyValidUntil`.',
} as const;
const PREVIOUS_PUBLIC_KEY_UNTIL_DOC = {
  type: String,
  format: 'date-time',
  description: 'Present with `previousSigningPublicKey`: until when the previous key pair also signs.',
} as const;

export class PreferenceDto {
  @ApiProperty({ enum: EventType, enumName: 'EventType' })
  type: EventType;

  @ApiProperty({ enum: NotificationChannel, enumName: 'NotificationChannel' })
  channel: NotificationChannel;

  @ApiProperty()
  enabled: boolean;

  @ApiPropertyOptional(WEBHOOK_URL_DOC)
  webhookUrl?: string | null;

  @ApiPropertyOptional({ description: 'WEBHOOK rows only: true when a signing secret exists. The secret itself is never listed.' })
  hasWebhookSecret?: boolean;

  @ApiPropertyOptional(ORDERED_DELIVERY_DOC)
  orderedDelivery?: boolean;

  @ApiPropertyOptional(SIGNATURE_SCHEMES_DOC)
  signatureSchemes?: SignatureScheme[];

  @ApiPropertyOptional(SIGNING_PUBLIC_KEY_DOC)
  signingPublicKey?: string;

  @ApiPropertyOptional(PREVIOUS_PUBLIC_KEY_DOC)
  previousSigningPublicKey?: string;

  @ApiPropertyOptional(PREVIOUS_PUBLIC_KEY_UNTIL_DOC)
  previousSigningPublicKeyValidUntil?: string;

  @ApiPropertyOptional(DISABLED_REASON_CODE_DOC)
  disabledReasonCode?: WebhookDisabledReasonCode;

  @ApiPropertyOptional(DISABLED_REASON_DOC)
  disabledReason?: string;

  @ApiProperty({ type: String, format: 'date-time' })
  updatedAt: string;
}

export class UpsertPreferenceResponseDto extends PreferenceDto {
  @ApiPropertyOptional({
    example: 'whsec_hX1vC0m0cQ4J1s0tY2rRrKpZfI5lqGm4H0y9qkM1fZ8=',
    description:
      'The signing secret, returned exactly once: in the response to the first enable of WEBHOOK for this event type. ' +
      'It cannot be retrieved later. The HMAC key is this whole string, UTF-8 encoded.',
  })
  webhookSecret?: string;
}

export class RotatedSecretResponseDto extends PreferenceDto {
  @ApiProperty({
    example: 'whsec_Zq3b8Xr0yJk2N5pV7tWc1aE4hL6mQ9sD0fG2iK4oU8w=',
    description:
      'The new signing secret, returned exactly once. The next attempt, pending retries included, is signed with this one ' +
      '(and, during an overlap, `webhook-signature` with the previous one too). The `X-Service-Signature` HMAC key is ' +
      'this whole string, UTF-8 encoded; the `webhook-signature` key the bytes its base64 after `whsec_` encodes.',
  })
  webhookSecret: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-11-26T09:30:00.000Z',
    description: 'Until when the previous secret also signs `webhook-signature` (the overlap asked for); null when it stopped at once.',
  })
  previousSecretValidUntil: string | null;
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

  @ApiPropertyOptional(WEBHOOK_URL_DOC)
  webhookUrl?: string | null;

  @ApiPropertyOptional({ description: 'WEBHOOK rows only.' })
  hasWebhookSecret?: boolean;

  @ApiPropertyOptional(ORDERED_DELIVERY_DOC)
  orderedDelivery?: boolean;

  @ApiPropertyOptional(SIGNATURE_SCHEMES_DOC)
  signatureSchemes?: SignatureScheme[];

  @ApiPropertyOptional(SIGNING_PUBLIC_KEY_DOC)
  signingPublicKey?: string;

  @ApiPropertyOptional(PREVIOUS_PUBLIC_KEY_DOC)
  previousSigningPublicKey?: string;

  @ApiPropertyOptional(PREVIOUS_PUBLIC_KEY_UNTIL_DOC)
  previousSigningPublicKeyValidUntil?: string;

  @ApiPropertyOptional(DISABLED_REASON_CODE_DOC)
  disabledReasonCode?: WebhookDisabledReasonCode;

  @ApiPropertyOptional(DISABLED_REASON_DOC)
  disabledReason?: string;
}
