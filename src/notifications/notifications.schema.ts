import { CreatePreferencesAndSecrets1763800000000 } from './migrations/1763800000000-create-preferences-and-secrets';
import { NotificationPreference } from './preferences/notification-preference.entity';
import { WebhookSigningSecret } from './secrets/webhook-signing-secret.entity';

/** Entities of the notifications module, for the host's DataSource (or use `autoLoadEntities`). */
export const NOTIFICATIONS_ENTITIES = [NotificationPreference, WebhookSigningSecret];

/** Migrations of the notifications module, in order, for the host's DataSource. */
export const NOTIFICATIONS_MIGRATIONS = [CreatePreferencesAndSecrets1763800000000];
