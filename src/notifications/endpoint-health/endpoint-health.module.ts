import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeliveryModule } from '../delivery/delivery.module';
import { PreferencesModule } from '../preferences/preferences.module';
import { SettingsApiModule } from '../settings-api/settings-api.module';
import { EndpointHealthController } from './endpoint-health.controller';
import { EndpointHealthRecorder } from './endpoint-health-recorder.service';
import { EndpointHealthService } from './endpoint-health.service';
import { WebhookHealth } from './webhook-health.entity';
import { WebhookHealthRepository } from './webhook-health.repository';

/** Endpoint health: kept from `DeliveryEvents` (above delivery, like auto-disable), shown by the settings API. */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookHealth]), DeliveryModule, PreferencesModule, SettingsApiModule],
  controllers: [EndpointHealthController],
  providers: [WebhookHealthRepository, EndpointHealthRecorder, EndpointHealthService],
  exports: [EndpointHealthRecorder],
})
export class EndpointHealthModule {}
