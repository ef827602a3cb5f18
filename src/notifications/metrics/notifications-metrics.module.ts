import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module';
import { NotificationsMetrics } from './notifications-metrics.service';

@Module({ imports: [DeliveryModule], providers: [NotificationsMetrics], exports: [NotificationsMetrics] })
export class NotificationsMetricsModule {}
