import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SettingsApiModule } from '../settings-api/settings-api.module';
import { SecretsModule } from '../secrets/secrets.module';
import { UrlPolicyModule } from '../url-policy/url-policy.module';
import { NotificationPreference } from './notification-preference.entity';
import { NotificationPreferenceRepository } from './notification-preference.repository';
import { PreferencesController } from './preferences.controller';
import { PreferencesService } from './preferences.service';
import { WebhookStream } from './webhook-stream.entity';
import { WebhookStreamRepository } from './webhook-stream.repository';

@Module({
  imports: [TypeOrmModule.forFeature([NotificationPreference, WebhookStream]), SettingsApiModule, SecretsModule, UrlPolicyModule],
  controllers: [PreferencesController],
  providers: [NotificationPreferenceRepository, WebhookStreamRepository, PreferencesService],
  exports: [PreferencesService],
})
export class PreferencesModule {}
