import { WEBHOOK_REFUSED_EVENT_TYPES } from './event-catalog';

const refused = [...WEBHOOK_REFUSED_EVENT_TYPES].sort().join(', ');

/** The class-validator message of a `type` that must be able to use WEBHOOK. */
export const WEBHOOK_EVENT_TYPE_MESSAGE = `must be an event type that can be delivered to a webhook (not ${refused})`;

/**
 * Descriptions of the event-type schemas, merged into the OpenAPI document (an enum's named schema takes no
 * description from a decorator): a generated client gets the webhook types as their own union.
 */
export const EVENT_TYPE_SCHEMA_DESCRIPTIONS = {
  EventType: `Every event type. ${refused} are managed by the service and refuse WEBHOOK: see WebhookEventType.`,
  WebhookEventType:
    `The event types that can be delivered to a webhook (spec 6.2). The others, ${refused}, are managed by the ` +
    'service and refuse WEBHOOK: a settings screen hides their WEBHOOK toggle (the effective view has no WEBHOOK row for them).',
} as const;
