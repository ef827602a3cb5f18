import { WebhookDelivery } from './delivery/webhook-delivery.entity';
import { WebhookDeliveryAttempt } from './delivery/webhook-delivery-attempt.entity';
import { WebhookEvent } from './delivery/webhook-event.entity';
import { CreatePreferencesAndSecrets1763800000000 } from './migrations/1763800000000-create-preferences-and-secrets';
import { CreateWebhookDeliveries1763900000000 } from './migrations/1763900000000-create-webhook-deliveries';
import { AddAutoDisableAndRetentionIndexes1764000000000 } from './migrations/1764000000000-add-auto-disable-and-retention-indexes';
import { AddDeliveryWaitingReason1764100000000 } from './migrations/1764100000000-add-delivery-waiting-reason';
import { NotificationPreference } from './preferences/notification-preference.entity';
import { WebhookSigningSecret } from './secrets/webhook-signing-secret.entity';

/** Entities of the notifications module, for the host's DataSource (or use `autoLoadEntities`). */
export const NOTIFICATIONS_ENTITIES = [NotificationPreference, WebhookSigningSecret, WebhookEvent, WebhookDelivery, WebhookDeliveryAttempt];

/** Migrations of the notifications module, in order, for the host's DataSource. */
export const NOTIFICATIONS_MIGRATIONS = [
  CreatePreferencesAndSecrets1763800000000,
  CreateWebhookDeliveries1763900000000,
  AddAutoDisableAndRetentionIndexes1764000000000,
  AddDeliveryWaitingReason1764100000000,
];
