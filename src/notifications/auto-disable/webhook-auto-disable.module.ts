import { Module } from '@nestjs/common';
import { DeliveryModule } from '../delivery/delivery.module';
import { PreferencesModule } from '../preferences/preferences.module';
import { WebhookAutoDisable } from './webhook-auto-disable';

/** Separate from PreferencesModule because it listens to DeliveryModule, which itself needs preferences. */
@Module({ imports: [DeliveryModule, PreferencesModule], providers: [WebhookAutoDisable], exports: [WebhookAutoDisable] })
export class WebhookAutoDisableModule {}
