/** Channels a notification preference can be stored for. This service delivers only `WEBHOOK`. */
export enum NotificationChannel {
  IN_APP = 'IN_APP',
  EMAIL = 'EMAIL',
  WEBHOOK = 'WEBHOOK',
}

/** Every funding-automation event type the service knows. */
export enum EventType {
  RATE_SPIKE = 'RATE_SPIKE',
  RATE_DROP = 'RATE_DROP',
  RATE_FLOOR_BLOCKED = 'RATE_FLOOR_BLOCKED',
  LOAN_EXECUTED = 'LOAN_EXECUTED',
  LOAN_EXPIRING = 'LOAN_EXPIRING',
  LOAN_EARLY_REPAID = 'LOAN_EARLY_REPAID',
  LARGE_EARLY_REPAYMENT = 'LARGE_EARLY_REPAYMENT',
  LARGE_LOAN_FILLED = 'LARGE_LOAN_FILLED',
  STALE_OFFER = 'STALE_OFFER',
  KILL_SWITCH_ACTIVATED = 'KILL_SWITCH_ACTIVATED',
  STRATEGY_PAUSED = 'STRATEGY_PAUSED',
  STRATEGY_ERROR = 'STRATEGY_ERROR',
  STRATEGY_TICK_STALE = 'STRATEGY_TICK_STALE',
  API_KEY_INVALID = 'API_KEY_INVALID',
  API_KEY_PERMISSIONS_CHANGED = 'API_KEY_PERMISSIONS_CHANGED',
  PLATFORM_OUTAGE = 'PLATFORM_OUTAGE',
  PLATFORM_RECOVERED = 'PLATFORM_RECOVERED',
  SYSTEM_ALERT = 'SYSTEM_ALERT',
  LOW_UTILIZATION = 'LOW_UTILIZATION',
  IDLE_CASH = 'IDLE_CASH',
  FEE_TIER_CHANGED = 'FEE_TIER_CHANGED',
  DAILY_DIGEST = 'DAILY_DIGEST',
  WEEKLY_DIGEST = 'WEEKLY_DIGEST',
  MONTHLY_DIGEST = 'MONTHLY_DIGEST',
  YEARLY_DIGEST = 'YEARLY_DIGEST',
  HIGH_UTILIZATION = 'HIGH_UTILIZATION',
  OFFER_FILLED = 'OFFER_FILLED',
  EARNINGS_MILESTONE = 'EARNINGS_MILESTONE',
  WITHDRAWAL_DETECTED = 'WITHDRAWAL_DETECTED',
}

export enum EventGroup {
  RATES = 'RATES',
  LOANS = 'LOANS',
  OFFERS = 'OFFERS',
  STRATEGY = 'STRATEGY',
  API_KEY = 'API_KEY',
  PLATFORM = 'PLATFORM',
  UTILIZATION_AND_CASH = 'UTILIZATION_AND_CASH',
  DIGESTS = 'DIGESTS',
  SERVICE_MANAGED = 'SERVICE_MANAGED',
}

/** How one event type may be delivered and where it goes when the user has said nothing. */
export interface EventTypeDefinition {
  readonly type: EventType;
  readonly group: EventGroup;
  /** Channels a user may set a preference for. */
  readonly channels: readonly NotificationChannel[];
  /** Channels that are on when the user has no explicit preference. */
  readonly defaultChannels: readonly NotificationChannel[];
}

const ALL_CHANNELS = [NotificationChannel.IN_APP, NotificationChannel.EMAIL, NotificationChannel.WEBHOOK] as const;
const MANAGED_CHANNELS = [NotificationChannel.IN_APP, NotificationChannel.EMAIL] as const;

const GROUPS: Record<EventGroup, readonly EventType[]> = {
  [EventGroup.RATES]: [EventType.RATE_SPIKE, EventType.RATE_DROP, EventType.RATE_FLOOR_BLOCKED],
  [EventGroup.LOANS]: [
    EventType.LOAN_EXECUTED,
    EventType.LOAN_EXPIRING,
    EventType.LOAN_EARLY_REPAID,
    EventType.LARGE_EARLY_REPAYMENT,
    EventType.LARGE_LOAN_FILLED,
  ],
  [EventGroup.OFFERS]: [EventType.STALE_OFFER],
  [EventGroup.STRATEGY]: [
    EventType.KILL_SWITCH_ACTIVATED,
    EventType.STRATEGY_PAUSED,
    EventType.STRATEGY_ERROR,
    EventType.STRATEGY_TICK_STALE,
  ],
  [EventGroup.API_KEY]: [EventType.API_KEY_INVALID, EventType.API_KEY_PERMISSIONS_CHANGED],
  [EventGroup.PLATFORM]: [EventType.PLATFORM_OUTAGE, EventType.PLATFORM_RECOVERED, EventType.SYSTEM_ALERT],
  [EventGroup.UTILIZATION_AND_CASH]: [EventType.LOW_UTILIZATION, EventType.IDLE_CASH, EventType.FEE_TIER_CHANGED],
  [EventGroup.DIGESTS]: [EventType.DAILY_DIGEST, EventType.WEEKLY_DIGEST, EventType.MONTHLY_DIGEST, EventType.YEARLY_DIGEST],
  [EventGroup.SERVICE_MANAGED]: [
    EventType.HIGH_UTILIZATION,
    EventType.OFFER_FILLED,
    EventType.EARNINGS_MILESTONE,
    EventType.WITHDRAWAL_DETECTED,
  ],
};

function define(type: EventType, group: EventGroup): EventTypeDefinition {
  const managed = group === EventGroup.SERVICE_MANAGED;
  return {
    type,
    group,
    channels: managed ? MANAGED_CHANNELS : ALL_CHANNELS,
    defaultChannels: group === EventGroup.DIGESTS ? [NotificationChannel.EMAIL] : [NotificationChannel.IN_APP],
  };
}

/** The event catalogue, in the order of the spec's table (service-managed types last). */
export const EVENT_CATALOG: readonly EventTypeDefinition[] = Object.entries(GROUPS).flatMap(([group, types]) =>
  types.map((type) => define(type, group as EventGroup)),
);

const BY_TYPE = new Map(EVENT_CATALOG.map((definition) => [definition.type, definition]));

export function eventTypeDefinition(type: EventType): EventTypeDefinition {
  const definition = BY_TYPE.get(type);
  if (!definition) throw new Error(`Unknown event type ${type}`);
  return definition;
}

/** Event types a user may enable the webhook channel for (spec 6.2). */
export const WEBHOOK_EVENT_TYPES: readonly EventType[] = EVENT_CATALOG.filter((d) => d.channels.includes(NotificationChannel.WEBHOOK)).map(
  (d) => d.type,
);

export function allowsChannel(type: EventType, channel: NotificationChannel): boolean {
  return eventTypeDefinition(type).channels.includes(channel);
}

/** Event types the service manages itself: they refuse the WEBHOOK channel (spec 6.2), so a settings screen hides that toggle. */
export const WEBHOOK_REFUSED_EVENT_TYPES: readonly EventType[] = EVENT_CATALOG.filter(
  (d) => !d.channels.includes(NotificationChannel.WEBHOOK),
).map((d) => d.type);
