import type { EventType } from '../catalog/event-catalog';
import { webhookKey } from './webhook-key';

export interface FinishedDelivery {
  readonly userId: number;
  readonly type: EventType;
  readonly delivered: boolean;
  /** The URL its last attempt went to: it counts only while the webhook still has that URL. */
  readonly webhookUrl?: string;
}

/** What a batch of finished deliveries does to one webhook's count of failed deliveries in a row. */
export interface FinishedRun {
  readonly userId: number;
  readonly type: EventType;
  /** The URL of its deliveries' last attempts (runs of one webhook with different URLs are kept apart). */
  readonly webhookUrl?: string;
  /** A delivery ended DELIVERED: the count restarts from 0 before `failuresAfter` is added. */
  readonly reset: boolean;
  /** Deliveries that ended FAILED after the last DELIVERED one of the batch. */
  readonly failuresAfter: number;
}

/** Folds deliveries, in the order they finished, into one run per webhook (user and type) and URL, in first-seen order. */
export function foldFinished(finished: readonly FinishedDelivery[]): FinishedRun[] {
  const runs = new Map<string, { userId: number; type: EventType; webhookUrl?: string; reset: boolean; failuresAfter: number }>();
  for (const { userId, type, delivered, webhookUrl } of finished) {
    const key = `${webhookKey(userId, type)} ${webhookUrl ?? ''}`;
    const run = runs.get(key) ?? { userId, type, ...(webhookUrl === undefined ? {} : { webhookUrl }), reset: false, failuresAfter: 0 };
    if (delivered) {
      run.reset = true;
      run.failuresAfter = 0;
    } else {
      run.failuresAfter++;
    }
    runs.set(key, run);
  }
  return [...runs.values()];
}
