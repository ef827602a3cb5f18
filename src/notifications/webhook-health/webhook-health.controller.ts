import { Get } from '@nestjs/common';
import { CurrentUserId } from '../auth/current-user-id.decorator';
import { ApiOkResponse, ApiOperation, ApiTags } from '../common/api/openapi-decorators';
import { SettingsController } from '../settings-api/settings-controller.decorator';
import { WebhookHealthService } from './webhook-health.service';
import { WebhookHealthDto } from './webhook-health.dto';

@ApiTags('Notification settings')
@SettingsController()
export class WebhookHealthController {
  constructor(private readonly health: WebhookHealthService) {}

  @Get('webhook-health')
  @ApiOperation({
    operationId: 'listWebhookHealth',
    summary: "How each of the user's webhooks is doing",
    description:
      'One item per saved WEBHOOK preference (type and URL): healthy, failing (since when, how many attempts in a row, the ' +
      'last status or error), circuit open (until when, how many deliveries wait), disabled by the service (why, when) or ' +
      'turned off. Kept from the recorded attempts a moment after each is recorded, all service instances together.',
  })
  @ApiOkResponse({ type: [WebhookHealthDto] })
  list(@CurrentUserId() userId: number): Promise<WebhookHealthDto[]> {
    return this.health.list(userId);
  }
}
