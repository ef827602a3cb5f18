import { applyDecorators, Controller, UseFilters, UseGuards, UsePipes } from '@nestjs/common';
import { ApiBearerAuth } from '../common/api/openapi-decorators';
import { ApiErrorResponses } from '../common/api/api-error-responses.decorator';
import { ApiRoleGuard } from '../common/api/api-role.guard';
import { ApiExceptionFilter } from '../common/api/api-exception.filter';
import { JsonBodyGuard } from '../common/api/json-body.guard';
import { createValidationPipe } from '../common/api/validation.pipe';
import { UserRateLimitGuard } from '../rate-limit/user-rate-limit.guard';
import { UserAuthGuard } from '../auth/user-auth.guard';

const SETTINGS_PATH = 'api/v1/settings/notifications';

/**
 * A controller of the user's settings API: rate limited per user, authenticated, JSON bodies only,
 * validated, and answering errors in the one shape whatever the host app's own filters do.
 */
export function SettingsController(): ClassDecorator {
  return applyDecorators(
    ApiBearerAuth(),
    ApiErrorResponses(401, 429, 500),
    Controller(SETTINGS_PATH),
    UseGuards(ApiRoleGuard, UserRateLimitGuard, UserAuthGuard, JsonBodyGuard),
    UsePipes(createValidationPipe()),
    UseFilters(ApiExceptionFilter),
  );
}
