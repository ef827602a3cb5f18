import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module';
import { DeliveryScheduler } from './delivery-scheduler.service';

/** Needs the host app's `ScheduleModule.forRoot()`. */
@Module({ imports: [DeliveryModule], providers: [DeliveryScheduler], exports: [DeliveryScheduler] })
export class SchedulerModule {}
