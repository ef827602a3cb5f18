import { Body, Controller, Get, HttpCode, HttpStatus, Put, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { CurrentUserId } from '../auth/current-user-id.decorator';
import { UserAuthGuard } from '../auth/user-auth.guard';
import { ApiExceptionFilter } from '../common/api-exception.filter';
import { ErrorResponseDto } from '../common/error-response.dto';
import { createValidationPipe } from '../common/validation.pipe';
import { EffectivePreferenceDto, PreferenceDto, UpsertPreferenceResponseDto } from './dto/preference.dto';
import { UpsertPreferenceDto } from './dto/upsert-preference.dto';
import { PreferencesService } from './preferences.service';

@ApiTags('Notification settings')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ type: ErrorResponseDto, description: 'Missing, invalid or expired bearer token.' })
@Controller('api/v1/settings/notifications')
@UseGuards(UserAuthGuard)
@UsePipes(createValidationPipe())
@UseFilters(ApiExceptionFilter)
export class PreferencesController {
  constructor(private readonly preferences: PreferencesService) {}

  @Put()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Create or update one preference (event type × channel)',
    description:
      'The first enable of WEBHOOK for an event type generates its signing secret and returns it once in `webhookSecret`. ' +
      'Later upserts keep the secret and never return it. `enabled: false` keeps the URL and the secret and stops deliveries.',
  })
  @ApiOkResponse({ type: UpsertPreferenceResponseDto })
  @ApiBadRequestResponse({ type: ErrorResponseDto, description: 'Invalid field; `errors` names it.' })
  upsert(@CurrentUserId() userId: number, @Body() body: UpsertPreferenceDto): Promise<UpsertPreferenceResponseDto> {
    return this.preferences.upsert(userId, body);
  }

  @Get()
  @ApiOperation({ summary: "The user's explicit preferences" })
  @ApiOkResponse({ type: [PreferenceDto] })
  list(@CurrentUserId() userId: number): Promise<PreferenceDto[]> {
    return this.preferences.list(userId);
  }

  @Get('effective')
  @ApiOperation({ summary: 'Defaults merged with the explicit preferences, one row per event type and allowed channel' })
  @ApiOkResponse({ type: [EffectivePreferenceDto] })
  effective(@CurrentUserId() userId: number): Promise<EffectivePreferenceDto[]> {
    return this.preferences.effective(userId);
  }
}
