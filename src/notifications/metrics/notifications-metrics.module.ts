import { Module } from '@nestjs/common';
import { ClockModule } from '../clock/clock.module';
import { DeliveryModule } from '../delivery/delivery.module';
import { NotificationsMetrics } from './notifications-metrics.service';
import { QueueDepthReader } from './queue-depth';
import { QueueDepthRepository } from './queue-depth.repository';

@Module({
  imports: [ClockModule, DeliveryModule],
  providers: [QueueDepthRepository, { provide: QueueDepthReader, useExisting: QueueDepthRepository }, NotificationsMetrics],
  exports: [NotificationsMetrics],
})
export class NotificationsMetricsModule {}
