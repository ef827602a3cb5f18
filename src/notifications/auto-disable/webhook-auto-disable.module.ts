import { Module } from '@nestjs/common';
import { EndpointHealthModule } from '../endpoint-health/endpoint-health.module';
import { DeliveryModule } from '../delivery/delivery.module';
import { PreferencesModule } from '../preferences/preferences.module';
import { WebhookAutoDisable } from './webhook-auto-disable.service';

/** Separate from PreferencesModule because it listens to DeliveryModule, which itself needs preferences. */
@Module({
  imports: [DeliveryModule, PreferencesModule, EndpointHealthModule],
  providers: [WebhookAutoDisable],
  exports: [WebhookAutoDisable],
})
export class WebhookAutoDisableModule {}
