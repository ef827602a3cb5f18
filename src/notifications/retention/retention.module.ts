import { Module } from '@nestjs/common';
import { ClockModule } from '../clock/clock.module';
import { DeliveryModule } from '../delivery/delivery.module';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import { DeliveryPurge } from './delivery-purge';
import { DeliveryPurgeRepository } from './delivery-purge.repository';
import { RETENTION_SETTINGS, retentionSettings } from './retention-settings';
import { RetentionService } from './retention.service';

/** The daily retention job. Needs the host app's `ScheduleModule.forRoot()`. */
@Module({
  imports: [ClockModule, DeliveryModule],
  providers: [
    { provide: RETENTION_SETTINGS, inject: [NOTIFICATIONS_OPTIONS], useFactory: retentionSettings },
    DeliveryPurgeRepository,
    { provide: DeliveryPurge, useExisting: DeliveryPurgeRepository },
    RetentionService,
  ],
  exports: [RetentionService],
})
export class RetentionModule {}
