import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ClockModule } from '../clock/clock.module';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { SecretCipher } from './secret-cipher';
import { SecretsReencryption } from './secrets-reencryption.service';
import { SecretsService } from './secrets.service';
import { WebhookSigningKey } from './webhook-signing-key.entity';
import { WebhookSigningKeyRepository } from './webhook-signing-key.repository';
import { WebhookSigningSecret } from './webhook-signing-secret.entity';
import { WebhookSigningSecretRepository } from './webhook-signing-secret.repository';

/** SecretsReencryption again, under a token only NotificationsModule uses to provide it to hosts (SecretsService stays inside). */
export const HOST_FACING_REENCRYPTION = Symbol('SecretsReencryption for hosts');

@Module({
  imports: [TypeOrmModule.forFeature([WebhookSigningSecret, WebhookSigningKey]), ClockModule],
  providers: [
    WebhookSigningSecretRepository,
    WebhookSigningKeyRepository,
    SecretsService,
    SecretsReencryption,
    {
      provide: SecretCipher,
      inject: [NOTIFICATIONS_OPTIONS],
      useFactory: (options: NotificationsModuleOptions) => new SecretCipher(options.encryptionKeys),
    },
    { provide: HOST_FACING_REENCRYPTION, useExisting: SecretsReencryption },
  ],
  exports: [SecretsService, SecretsReencryption, HOST_FACING_REENCRYPTION],
})
export class SecretsModule {}
