import { type DynamicModule, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { METRICS_TOKEN, MetricsTokenGuard } from './metrics-token.guard';

/** `GET /metrics` of the standalone service; needs NotificationsModule (for `NotificationsMetrics`). */
@Module({})
export class MetricsEndpointModule {
  static forToken(token: string | undefined): DynamicModule {
    return {
      module: MetricsEndpointModule,
      controllers: [MetricsController],
      providers: [{ provide: METRICS_TOKEN, useValue: token }, MetricsTokenGuard],
    };
  }
}
