import { ApiProperty, ApiPropertyOptional } from '../../common/api/openapi-decorators';
import { ArrayMaxSize, ArrayNotEmpty, ArrayUnique, IsArray, IsBoolean, IsEnum, IsOptional, IsString, MaxLength } from 'class-validator';
import { EventType, NotificationChannel } from '../../catalog/event-catalog';
import { SIGNATURE_SCHEMES, SignatureScheme } from '../../secrets/signature-scheme';
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

  @ApiPropertyOptional({
    enum: SignatureScheme,
    enumName: 'SignatureScheme',
    isArray: true,
    minItems: 1,
    maxItems: SIGNATURE_SCHEMES.length,
    uniqueItems: true,
    example: ['hmac', 'ed25519'],
    description:
      'WEBHOOK only: which schemes sign its deliveries, one or both. `hmac`: `X-Service-Signature` and Standard Webhooks ' +
      '`v1,` with the signing secret. `ed25519`: Standard Webhooks `v1a,` with a key pair the service makes the first ' +
      'time it is chosen; its public key is answered in `signingPublicKey`. When omitted, the stored choice is kept ' +
      '(`["hmac"]` for a new webhook).',
  })
  @IsOptional()
  @IsArray({ message: 'must be an array of signature schemes' })
  @ArrayNotEmpty({ message: 'must name at least one signature scheme' })
  @ArrayMaxSize(SIGNATURE_SCHEMES.length, { message: `must have at most ${SIGNATURE_SCHEMES.length} items` })
  @ArrayUnique({ message: 'must not repeat a signature scheme' })
  @IsEnum(SignatureScheme, { each: true, message: `each item must be one of ${SIGNATURE_SCHEMES.join(', ')}` })
  signatureSchemes?: SignatureScheme[];

  @ApiPropertyOptional({
    type: Boolean,
    example: true,
    description:
      "WEBHOOK only: ordered delivery for the webhook's URL (the one sent, else the stored one; refused without either). " +
      'It is per URL: every type of yours that posts to that URL follows it. On, a delivery to the URL starts only once ' +
      'the one before it is DELIVERED, FAILED or CANCELLED: a retrying delivery holds up the rest (up to 5 h 21 min with ' +
      'the retry schedule), a FAILED one lets the next go. Claims follow a change at once; deliveries already sending go ' +
      'on. When omitted, the stored choice is kept (off for a new URL).',
  })
  @IsOptional()
  @IsBoolean({ message: 'must be a boolean (true or false)' })
  orderedDelivery?: boolean;
}
