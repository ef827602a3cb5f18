import { Controller, HttpCode, HttpStatus, Post, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExceptionFilter } from '../../common/api/api-exception.filter';
import { ApiExcludeController } from '../../common/api/openapi-decorators';
import { OutboxEngine } from '../engine/outbox-engine.service';
import { InternalTokenGuard } from './internal-token.guard';

/**
 * Instance to instance: another instance left deliveries due for users whose partition this one owns
 * (`OwnerWakeUps`), and this one claims them now instead of at its next look for due work. In every process role (a
 * `worker` owns partitions too); `Authorization: Bearer <internalApiToken>`, 404 without a token configured. Not in the
 * OpenAPI document: no other service calls it.
 */
@ApiExcludeController()
@Controller('api/v1/internal/notifications/wake')
@UseGuards(InternalTokenGuard)
@UseFilters(ApiExceptionFilter)
export class OwnerWakeController {
  constructor(private readonly engine: OutboxEngine) {}

  @Post()
  @HttpCode(HttpStatus.NO_CONTENT)
  wake(): void {
    this.engine.wokenUp();
  }
}
