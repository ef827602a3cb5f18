import { WebhookDelivery } from './delivery/entities/webhook-delivery.entity';
import { WebhookDeliveryAttempt } from './delivery/entities/webhook-delivery-attempt.entity';
import { WebhookDeliveryInstance } from './delivery/partitions/webhook-delivery-instance.entity';
import { WebhookEndpointCircuit } from './delivery/partitions/webhook-endpoint-circuit.entity';
import { WebhookPartition } from './delivery/partitions/webhook-partition.entity';
import { WebhookEvent } from './delivery/entities/webhook-event.entity';
import { WebhookIdempotencyKey } from './delivery/publishing/idempotency/webhook-idempotency-key.entity';
import { CreatePreferencesAndSecrets1763800000000 } from './migrations/1763800000000-create-preferences-and-secrets';
import { CreateWebhookDeliveries1763900000000 } from './migrations/1763900000000-create-webhook-deliveries';
import { AddAutoDisableAndRetentionIndexes1764000000000 } from './migrations/1764000000000-add-auto-disable-and-retention-indexes';
import { AddDeliveryWaitingReason1764100000000 } from './migrations/1764100000000-add-delivery-waiting-reason';
import { OnePendingDeliveryPerEvent1764200000000 } from './migrations/1764200000000-one-pending-delivery-per-event';
import { CreateEndpointProbes1764300000000 } from './migrations/1764300000000-create-endpoint-probes';
import { CreateIdempotencyKeys1764400000000 } from './migrations/1764400000000-create-idempotency-keys';
import { AddRotationOverlap1764500000000 } from './migrations/1764500000000-add-rotation-overlap';
import { AddEventTraceContext1764600000000 } from './migrations/1764600000000-add-event-trace-context';
import { CreateWebhookHealth1764700000000 } from './migrations/1764700000000-create-webhook-health';
import { AddEndpointProbeHolder1764900000000 } from './migrations/1764900000000-add-endpoint-probe-holder';
import { CreateEndpointLimits1764800000000 } from './migrations/1764800000000-create-endpoint-limits';
import { PartitionOwnership1765000000000 } from './migrations/1765000000000-partition-ownership';
import { AddInstanceAnsweredAt1765100000000 } from './migrations/1765100000000-add-instance-answered-at';
import { AddDeliveryLogFilterIndexes1765200000000 } from './migrations/1765200000000-add-delivery-log-filter-indexes';
import { AddEd25519SigningKeys1765300000000 } from './migrations/1765300000000-add-ed25519-signing-keys';
import { CreateEventSchemas1765400000000 } from './migrations/1765400000000-create-event-schemas';
import { PublishedEventSchema } from './event-schemas/published-event-schema.entity';
import { CreateEndpointCircuits1765500000000 } from './migrations/1765500000000-create-endpoint-circuits';
import { AddDeliverySequences1765600000000 } from './migrations/1765600000000-add-delivery-sequences';
import { AddInstanceWakeUrl1765700000000 } from './migrations/1765700000000-add-instance-wake-url';
import { WebhookHealth } from './webhook-health/webhook-health.entity';
import { NotificationPreference } from './preferences/notification-preference.entity';
import { WebhookStream } from './preferences/webhook-stream.entity';
import { WebhookSigningKey } from './secrets/webhook-signing-key.entity';
import { WebhookSigningSecret } from './secrets/webhook-signing-secret.entity';

/** Entities of the notifications module, for the host's DataSource (or use `autoLoadEntities`). */
export const NOTIFICATIONS_ENTITIES = [
  NotificationPreference,
  WebhookSigningSecret,
  WebhookSigningKey,
  WebhookEvent,
  WebhookDelivery,
  WebhookDeliveryAttempt,
  WebhookPartition,
  WebhookDeliveryInstance,
  WebhookEndpointCircuit,
  WebhookIdempotencyKey,
  WebhookHealth,
  PublishedEventSchema,
  WebhookStream,
];

/** Migrations of the notifications module, in order, for the host's DataSource. */
export const NOTIFICATIONS_MIGRATIONS = [
  CreatePreferencesAndSecrets1763800000000,
  CreateWebhookDeliveries1763900000000,
  AddAutoDisableAndRetentionIndexes1764000000000,
  AddDeliveryWaitingReason1764100000000,
  OnePendingDeliveryPerEvent1764200000000,
  CreateEndpointProbes1764300000000,
  CreateIdempotencyKeys1764400000000,
  AddRotationOverlap1764500000000,
  AddEventTraceContext1764600000000,
  CreateWebhookHealth1764700000000,
  CreateEndpointLimits1764800000000,
  AddEndpointProbeHolder1764900000000,
  PartitionOwnership1765000000000,
  AddInstanceAnsweredAt1765100000000,
  AddDeliveryLogFilterIndexes1765200000000,
  AddEd25519SigningKeys1765300000000,
  CreateEventSchemas1765400000000,
  CreateEndpointCircuits1765500000000,
  AddDeliverySequences1765600000000,
  AddInstanceWakeUrl1765700000000,
];
