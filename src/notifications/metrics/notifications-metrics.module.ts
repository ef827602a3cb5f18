import { Module } from '@nestjs/common';
import { ClockModule } from '../clock/clock.module';
import { DeliveryModule } from '../delivery/delivery.module';
import { NotificationsMetrics } from './notifications-metrics.service';

@Module({ imports: [ClockModule, DeliveryModule], providers: [NotificationsMetrics], exports: [NotificationsMetrics] })
export class NotificationsMetricsModule {}
