import type { EventType } from '../catalog/event-catalog';

/** One webhook: a user's WEBHOOK channel for one event type, as a map key. */
export const webhookKey = (userId: number, type: EventType) => `${userId}/${type}`;
