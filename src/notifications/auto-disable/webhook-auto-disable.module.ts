import { Module } from '@nestjs/common';
import { WebhookHealthModule } from '../webhook-health/webhook-health.module';
import { DeliveryModule } from '../delivery/delivery.module';
import { PreferencesModule } from '../preferences/preferences.module';
import { WebhookAutoDisable } from './webhook-auto-disable.service';

/** Separate from PreferencesModule because it listens to DeliveryModule, which itself needs preferences. */
@Module({
  imports: [DeliveryModule, PreferencesModule, WebhookHealthModule],
  providers: [WebhookAutoDisable],
  exports: [WebhookAutoDisable],
})
export class WebhookAutoDisableModule {}
