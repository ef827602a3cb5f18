import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DeliveryModule } from '../delivery/delivery.module';
import { PreferencesModule } from '../preferences/preferences.module';
import { SettingsApiModule } from '../settings-api/settings-api.module';
import { WebhookHealthController } from './webhook-health.controller';
import { WebhookHealthRecorder } from './webhook-health-recorder.service';
import { WebhookHealthService } from './webhook-health.service';
import { WebhookHealth } from './webhook-health.entity';
import { WebhookHealthRepository } from './webhook-health.repository';

/** Webhook health: kept from `DeliveryEvents` (above delivery, like auto-disable), shown by the settings API. */
@Module({
  imports: [TypeOrmModule.forFeature([WebhookHealth]), DeliveryModule, PreferencesModule, SettingsApiModule],
  controllers: [WebhookHealthController],
  providers: [WebhookHealthRepository, WebhookHealthRecorder, WebhookHealthService],
  exports: [WebhookHealthRecorder],
})
export class WebhookHealthModule {}
