import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SettingsApiModule } from '../settings-api/settings-api.module';
import { Clock } from '../clock/clock';
import { ClockModule } from '../clock/clock.module';
import { NOTIFICATIONS_OPTIONS } from '../notifications.module-definition';
import type { NotificationsModuleOptions } from '../notifications-options.interface';
import { EventSchemasModule } from '../event-schemas/event-schemas.module';
import { PreferencesModule } from '../preferences/preferences.module';
import { UrlPolicyModule } from '../url-policy/url-policy.module';
import { WebhookUrlPolicy } from '../url-policy/webhook-url-policy';
import { DeliveriesController } from './delivery-log/deliveries.controller';
import { DeliveryActivityLogger } from './events/delivery-activity.logger';
import { DeliveryEvents } from './events/delivery-events.service';
import { DeliveriesService } from './delivery-log/deliveries.service';
import { DeliveryLogRepository } from './delivery-log/delivery-log.repository';
import { AfterCommit } from './engine/after-commit.subscriber';
import { DeliveryOutboxRepository } from './engine/delivery-outbox.repository';
import { OutboxEngine } from './engine/outbox-engine.service';
import { OutboxStore } from './engine/outbox-store';
import { OwnerWakeController } from './publishing/owner-wake.controller';
import { OwnerWakeUps } from './partitions/owner-wake-ups';
import { PartitionLeaseRepository } from './partitions/partition-lease.repository';
import { WebhookEndpointCircuit } from './partitions/webhook-endpoint-circuit.entity';
import { PartitionLeases } from './partitions/partition-leases';
import { PartitionOwnership } from './partitions/partition-ownership';
import { WebhookDeliveryInstance } from './partitions/webhook-delivery-instance.entity';
import { WebhookPartition } from './partitions/webhook-partition.entity';
import { DELIVERY_SETTINGS, type DeliverySettings, deliverySettings } from './delivery-settings';
import { WebhookSender } from './http/webhook-sender';
import { IdempotencyKeyRepository } from './publishing/idempotency/idempotency-key.repository';
import { IDEMPOTENCY_WINDOW_MS, idempotencyWindowMs } from './publishing/idempotency/idempotency-window';
import { WebhookIdempotencyKey } from './publishing/idempotency/webhook-idempotency-key.entity';
import { InternalEventsController } from './publishing/internal-events.controller';
import { InternalTokenGuard } from './publishing/internal-token.guard';
import { DeliveryTracing } from './trace-context/delivery-tracing';
import { WebhookDelivery } from './entities/webhook-delivery.entity';
import { WebhookDeliveryAttempt } from './entities/webhook-delivery-attempt.entity';
import { WebhookEvent } from './entities/webhook-event.entity';
import { WebhookPublisher } from './publishing/webhook-publisher.service';

/**
 * WebhookPublisher and DeliveryEvents again, under tokens only NotificationsModule uses: it provides them to hosts from
 * these (Nest re-exports whole modules only, and this module's other exports are internal).
 */
export const HOST_FACING_PUBLISHER = Symbol('WebhookPublisher for hosts');
export const HOST_FACING_DELIVERY_EVENTS = Symbol('DeliveryEvents for hosts');

@Module({
  imports: [
    TypeOrmModule.forFeature([
      WebhookEvent,
      WebhookDelivery,
      WebhookDeliveryAttempt,
      WebhookPartition,
      WebhookDeliveryInstance,
      WebhookEndpointCircuit,
      WebhookIdempotencyKey,
    ]),
    ClockModule,
    SettingsApiModule,
    PreferencesModule,
    UrlPolicyModule,
    EventSchemasModule,
  ],
  controllers: [DeliveriesController, InternalEventsController, OwnerWakeController],
  providers: [
    { provide: DELIVERY_SETTINGS, inject: [NOTIFICATIONS_OPTIONS], useFactory: deliverySettings },
    { provide: IDEMPOTENCY_WINDOW_MS, inject: [NOTIFICATIONS_OPTIONS], useFactory: idempotencyWindowMs },
    IdempotencyKeyRepository,
    {
      provide: WebhookSender,
      inject: [WebhookUrlPolicy, NOTIFICATIONS_OPTIONS, DELIVERY_SETTINGS],
      useFactory: (urlPolicy: WebhookUrlPolicy, options: NotificationsModuleOptions, settings: DeliverySettings) =>
        // As many connections per origin as attempts in flight: an attempt never waits for a pooled connection while its deadline runs.
        new WebhookSender({
          urlPolicy,
          extraCaPem: options.extraCaPem,
          timeoutMs: settings.timeoutMs,
          connectionsPerOrigin: settings.concurrency,
        }),
    },
    DeliveryEvents,
    // OpenTelemetry when the host has it (loaded on first use), else the traceparent header alone.
    { provide: DeliveryTracing, useFactory: () => new DeliveryTracing() },
    DeliveryOutboxRepository,
    { provide: OutboxStore, useExisting: DeliveryOutboxRepository },
    PartitionLeaseRepository,
    { provide: PartitionLeases, useExisting: PartitionLeaseRepository },
    {
      provide: PartitionOwnership,
      inject: [PartitionLeases, Clock, DELIVERY_SETTINGS],
      useFactory: (leases: PartitionLeases, clock: Clock, settings: DeliverySettings) => new PartitionOwnership(leases, clock, settings),
    },
    {
      provide: OwnerWakeUps,
      inject: [PartitionLeases, Clock, NOTIFICATIONS_OPTIONS, DELIVERY_SETTINGS],
      useFactory: (leases: PartitionLeases, clock: Clock, options: NotificationsModuleOptions, settings: DeliverySettings) =>
        new OwnerWakeUps(leases, clock, options.internalApiToken ?? null, settings.wakeUrl),
    },
    DeliveryLogRepository,
    AfterCommit,
    OutboxEngine,
    DeliveriesService,
    WebhookPublisher,
    InternalTokenGuard,
    { provide: HOST_FACING_PUBLISHER, useExisting: WebhookPublisher },
    { provide: HOST_FACING_DELIVERY_EVENTS, useExisting: DeliveryEvents },
    DeliveryActivityLogger,
  ],
  exports: [
    WebhookPublisher,
    DeliveriesService,
    OutboxEngine,
    DeliveryEvents,
    ClockModule,
    IdempotencyKeyRepository,
    IDEMPOTENCY_WINDOW_MS,
    HOST_FACING_PUBLISHER,
    HOST_FACING_DELIVERY_EVENTS,
  ],
})
export class DeliveryModule {}
