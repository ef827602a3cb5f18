import { Controller, Get, Res, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { NotificationsMetrics } from '../../index';
import { MetricsTokenGuard } from './metrics-token.guard';

@ApiExcludeController()
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: NotificationsMetrics) {}

  /** Prometheus text format of the registry the notifications module registered on. */
  @Get()
  @UseGuards(MetricsTokenGuard)
  async scrape(@Res({ passthrough: true }) response: Response): Promise<string> {
    response.setHeader('Content-Type', this.metrics.registry.contentType);
    return this.metrics.registry.metrics();
  }
}
