export { NotificationsModule } from './notifications/notifications.module';
export {
  NOTIFICATIONS_OPTIONS,
  NOTIFICATIONS_ASYNC_OPTIONS_TYPE,
  NOTIFICATIONS_OPTIONS_TYPE,
} from './notifications/notifications.module-definition';
export type { EncryptionKey, NotificationsModuleOptions, UserIdResolver } from './notifications/notifications-options.interface';
export type { NotificationsOptionsFactory } from './notifications/notifications-options-factory';
export {
  EVENT_CATALOG,
  EventGroup,
  EventType,
  NotificationChannel,
  WEBHOOK_EVENT_TYPES,
  eventTypeDefinition,
  type EventTypeDefinition,
} from './notifications/catalog/event-catalog';
export { NOTIFICATIONS_ENTITIES, NOTIFICATIONS_MIGRATIONS } from './notifications/notifications.schema';
export { NotificationPreference } from './notifications/preferences/notification-preference.entity';
export { WebhookSigningSecret } from './notifications/secrets/webhook-signing-secret.entity';
export { NotificationPreferences } from './notifications/preferences/notification-preferences';
export { jwtUserResolver, signUserToken } from './notifications/auth/jwt-user-resolver';
export type { HostResolver } from './notifications/url-policy/webhook-url-policy';
export { WebhookPublisher, type PublishableEvent, type PublishOptions } from './notifications/delivery/webhook-publisher';
export { PublishEventDto, PublishEventsDto, PublishResultDto, Severity } from './notifications/delivery/dto/publish-event.dto';
export { verifyWebhookSignature, type VerifyWebhookSignatureInput } from './notifications/delivery/webhook-signature';
export { DeliveryStatus, WebhookDelivery } from './notifications/delivery/webhook-delivery.entity';
export { WebhookDeliveryAttempt } from './notifications/delivery/webhook-delivery-attempt.entity';
export { WebhookEvent } from './notifications/delivery/webhook-event.entity';
export { Clock, SystemClock } from './notifications/clock/clock';
export type { DeliveryTuning } from './notifications/notifications-options.interface';
export type { RetentionOptions } from './notifications/notifications-options.interface';
export { RetentionService, type RetentionReport } from './notifications/retention/retention.service';
export { SecretsReencryption, UnconfiguredKeysError, type ReencryptionReport } from './notifications/secrets/secrets-reencryption';
export type { RateLimit, RateLimitOptions } from './notifications/rate-limit/rate-limit-options';
export { corsOptionsFor } from './notifications/common/cors-options';
export { ApiExceptionFilter } from './notifications/common/api-exception.filter';
export { ErrorResponseDto, FieldErrorDto } from './notifications/common/error-response.dto';
export {
  DeliveryEvents,
  type AttemptRecorded,
  type DeliveryCancelled,
  type SchedulerTickFinished,
} from './notifications/delivery/delivery-events';
export { NotificationsMetrics } from './notifications/metrics/notifications-metrics';
