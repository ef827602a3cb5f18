import { Body, Get, Header, HttpCode, HttpStatus, Post, Put } from '@nestjs/common';
import { ApiBadRequestResponse, ApiNotFoundResponse, ApiOkResponse, ApiOperation, ApiTags } from '../common/api/openapi-decorators';
import { CurrentUserId } from '../auth/current-user-id.decorator';
import { SettingsController } from '../settings-api/settings-controller.decorator';
import { ApiErrorResponses } from '../common/api/api-error-responses.decorator';
import { ErrorResponseDto } from '../common/api/error-response.dto';
import { EffectivePreferenceDto, PreferenceDto, RotatedSecretResponseDto, UpsertPreferenceResponseDto } from './dto/preference.dto';
import { RotateSecretDto, RotateSigningKeyDto } from './dto/rotate-secret.dto';
import { UpsertPreferenceDto } from './dto/upsert-preference.dto';
import { PreferencesService } from './preferences.service';

@ApiTags('Notification settings')
@SettingsController()
export class PreferencesController {
  constructor(private readonly preferences: PreferencesService) {}

  @Put()
  @HttpCode(HttpStatus.OK)
  @Header('Cache-Control', 'no-store') // the first enable answers the signing secret: no cache keeps a copy
  @ApiOperation({
    operationId: 'upsertPreference',
    summary: 'Create or update one preference (event type × channel)',
    description:
      'The first enable of WEBHOOK for an event type generates its signing secret and returns it once in `webhookSecret`. ' +
      'Later upserts keep the secret and never return it. `enabled: false` keeps the URL and the secret and stops deliveries.',
  })
  @ApiOkResponse({ type: UpsertPreferenceResponseDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'Invalid field; `errors` names it.' })
  @ApiErrorResponses(413, 415)
  upsert(@CurrentUserId() userId: number, @Body() body: UpsertPreferenceDto): Promise<UpsertPreferenceResponseDto> {
    return this.preferences.upsert(userId, body);
  }

  @Get()
  @ApiOperation({
    operationId: 'listPreferences',
    summary: "The user's explicit preferences",
    description:
      'Only what the user has saved, one row per event type and channel; WEBHOOK rows carry `webhookUrl`, `hasWebhookSecret` ' +
      '(never the secret) and, while the service has turned the webhook off, `disabledReasonCode` and `disabledReason`.',
  })
  @ApiOkResponse({ type: [PreferenceDto] })
  list(@CurrentUserId() userId: number): Promise<PreferenceDto[]> {
    return this.preferences.list(userId);
  }

  @Get('effective')
  @ApiOperation({
    operationId: 'listEffectivePreferences',
    summary: 'Defaults merged with the explicit preferences, one row per event type and allowed channel',
    description:
      'What a settings screen renders: every event type with its group, and one row per channel the type offers, ' +
      '`source: USER` where the user saved a preference, else the default (`IN_APP`, `EMAIL` for the digests). ' +
      'Types that refuse WEBHOOK (see the WebhookEventType schema) have no WEBHOOK row: hide that toggle.',
  })
  @ApiOkResponse({ type: [EffectivePreferenceDto] })
  effective(@CurrentUserId() userId: number): Promise<EffectivePreferenceDto[]> {
    return this.preferences.effective(userId);
  }

  @Post('webhook/rotate-secret')
  @HttpCode(HttpStatus.OK)
  @Header('Cache-Control', 'no-store') // answers the new signing secret
  @ApiOperation({
    operationId: 'rotateSigningSecret',
    summary: "Replace the signing secret of one event type's webhook",
    description:
      "Generates a new signing secret for the type's configured webhook (enabled or not) and returns it once in `webhookSecret`. " +
      'The next attempt, pending retries included, is signed with the new one. With `overlapHours`, the old secret also ' +
      'signs the Standard Webhooks `webhook-signature` for that long (two signatures), so a receiver verifying it switches ' +
      'without rejecting anything; `X-Service-Signature` carries the new secret only, so a receiver of that scheme accepts ' +
      'either secret while it switches. A delivery rejected meanwhile is retried.',
  })
  @ApiOkResponse({ type: RotatedSecretResponseDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'Unknown event type; `errors` names the field.' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'No webhook is configured for this event type.' })
  @ApiErrorResponses(413, 415)
  rotateSecret(@CurrentUserId() userId: number, @Body() body: RotateSecretDto): Promise<RotatedSecretResponseDto> {
    return this.preferences.rotateSecret(userId, body.type, body.overlapHours);
  }

  @Post('webhook/rotate-signing-key')
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    operationId: 'rotateSigningKey',
    summary: "Replace the Ed25519 key pair of one event type's webhook",
    description:
      "Generates a new key pair for the type's configured webhook (enabled or not; its first, if it had none) and answers " +
      'the preference with the new `signingPublicKey`. The private key is never returned. The next attempt, pending ' +
      'retries included, is signed with the new key when the webhook has `ed25519` among its `signatureSchemes`. With ' +
      '`overlapHours`, the old key also signs (`webhook-signature` carries a `v1a` of each) for that long, and the row ' +
      'shows `previousSigningPublicKey` until then.',
  })
  @ApiOkResponse({ type: PreferenceDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'Unknown event type or bad overlap; `errors` names the field.' })
  @ApiNotFoundResponse({ type: ErrorResponseDto, description: 'No webhook is configured for this event type.' })
  @ApiErrorResponses(413, 415)
  rotateSigningKey(@CurrentUserId() userId: number, @Body() body: RotateSigningKeyDto): Promise<PreferenceDto> {
    return this.preferences.rotateSigningKey(userId, body.type, body.overlapHours);
  }
}
