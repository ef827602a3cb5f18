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
export { WebhookSigningKey } from './notifications/secrets/webhook-signing-key.entity';
export { NotificationPreferences } from './notifications/preferences/notification-preferences.service';
export { jwtUserResolver, signUserToken } from './notifications/auth/jwt-user-resolver';
export { parseUserId } from './notifications/auth/user-id';
export type { HostResolutionOptions, HostResolver } from './notifications/url-policy/webhook-url-policy';
export {
  WebhookPublisher,
  type PublishableEvent,
  type PublishOptions,
} from './notifications/delivery/publishing/webhook-publisher.service';
export { QueryRunnerTransactionStillOpenError } from './notifications/common/database/serial-transactions';
export { PublishEventDto, PublishEventsDto, PublishResultDto } from './notifications/delivery/publishing/dto/publish-event.dto';
export { Severity } from './notifications/delivery/wire/severity';
export { signWebhook, verifyWebhookSignature, type VerifyWebhookSignatureInput } from './notifications/delivery/wire/webhook-signature';
export {
  signStandardWebhook,
  signStandardWebhookEd25519,
  verifyWebhookPublicKeySignature,
  type VerifyWebhookPublicKeySignatureInput,
} from './notifications/delivery/wire/standard-webhooks-signature';
export { SignatureScheme } from './notifications/secrets/signature-scheme';
export { DeliveryStatus, WebhookDelivery } from './notifications/delivery/entities/webhook-delivery.entity';
export { WebhookDeliveryAttempt } from './notifications/delivery/entities/webhook-delivery-attempt.entity';
export { WebhookEvent } from './notifications/delivery/entities/webhook-event.entity';
export { Clock, SystemClock } from './notifications/clock/clock';
export type { DeliveryTuning } from './notifications/notifications-options.interface';
export type { RetentionOptions } from './notifications/notifications-options.interface';
export { RetentionService, type RetentionReport } from './notifications/retention/retention.service';
export {
  REENCRYPTION_BATCH_SIZE,
  SecretsReencryption,
  UnconfiguredKeysError,
  type ReencryptionReport,
} from './notifications/secrets/secrets-reencryption.service';
export { DEFAULT_RATE_LIMITS, type RateLimit, type RateLimitOptions } from './notifications/rate-limit/rate-limit-options';
export { corsOptionsFor } from './notifications/settings-api/cors-options';
export { ApiExceptionFilter } from './notifications/common/api/api-exception.filter';
export { ErrorResponseDto, FieldErrorDto } from './notifications/common/api/error-response.dto';
export {
  DeliveryEvents,
  type AttemptRecorded,
  type DeliveryCancelled,
  type SchedulerTickFinished,
  type WebhookHealthChange,
  type WebhookHealthChanged,
  type WebhookHealthState,
} from './notifications/delivery/events/delivery-events.service';
export { NotificationsMetrics } from './notifications/metrics/notifications-metrics.service';

// The options' allowed values and defaults, for an app that configures the module from its environment (the standalone
// service's config/ does), and its other building blocks: the OpenAPI document's webhooks, a constant-time bearer token.
export { DEFAULT_LEASE_MS, LEASE_MARGIN_MS } from './notifications/delivery/delivery-settings';
export { PROCESS_ROLES, type ProcessRole } from './notifications/process-role';
export { DEFAULT_WEBHOOK_TIMEOUT_MS } from './notifications/delivery/http/webhook-sender';
export { CLAIM_MODES, type ClaimMode } from './notifications/delivery/engine/claim-mode';
export { DEFAULT_IDEMPOTENCY_KEY_HOURS } from './notifications/delivery/publishing/idempotency/idempotency-window';
export { DEFAULT_RETENTION } from './notifications/retention/retention-settings';
export { DEFAULT_FAILING_AFTER_ATTEMPTS } from './notifications/webhook-health/health-settings';
export { parseCidrList, type CidrList } from './notifications/url-policy/address-policy';
export { BearerToken } from './notifications/common/api/bearer-token';
export { EVENT_TYPE_SCHEMA_DESCRIPTIONS } from './notifications/catalog/event-type-openapi';
export { WebhookEventBodyDto, webhookDocumentation } from './notifications/delivery/wire/webhook-openapi';
export type { EventPayloadSchema, EventSchemas, JsonSchema } from './notifications/event-schemas/event-schemas';
export { eventSchemaComponents } from './notifications/event-schemas/event-schemas-openapi';
export { readEventSchemas } from './notifications/event-schemas/event-schema-files';
export { InvalidEventSchemaError } from './notifications/event-schemas/payload-schemas';
