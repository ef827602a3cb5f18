import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module';
import { NotificationsMetrics } from './notifications-metrics';
import { QueueDepthRepository } from './queue-depth.repository';

@Module({ imports: [DeliveryModule], providers: [NotificationsMetrics, QueueDepthRepository], exports: [NotificationsMetrics] })
export class NotificationsMetricsModule {}
