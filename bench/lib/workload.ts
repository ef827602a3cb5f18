import { request } from 'undici';
import { sleep, wallMs } from './clock';
import type { DeliveryStates } from './delivery-states';
import type { IpcChild } from './ipc';
import type { ReceiverStats } from './receiver-types';
import { INTERNAL_TOKEN, userAuthorization } from './services';

const TYPES = ['LOAN_EXECUTED', 'RATE_SPIKE', 'STRATEGY_ERROR'] as const;

export const typeOfUser = (userId: number) => TYPES[userId % TYPES.length];

export interface BenchEvent {
  userId: number;
  type: string;
  severity: 'INFO';
  title: string;
  body: string;
  payload: { seq: number; t?: number; amount: string; currency: string; rate: string; periodDays: number };
}

/** The user event `seq` goes to: 1 + seq mod users. */
export function userOfEvent(seq: number, users: number): number {
  return 1 + (seq % users);
}

/** Event `seq` goes to {@link userOfEvent}, on the one type that user enabled. */
export function benchEvent(seq: number, users: number): BenchEvent {
  const userId = userOfEvent(seq, users);
  return {
    userId,
    type: typeOfUser(userId),
    severity: 'INFO',
    title: `Loan executed #${seq}`,
    body: 'A 30-day loan of 1,250.00 USD at 0.0210% daily was executed on your funding account.',
    payload: { seq, amount: '1250.00', currency: 'USD', rate: '0.000210', periodDays: 30 },
  };
}

export const benchEvents = (from: number, count: number, users: number) =>
  Array.from({ length: count }, (_, i) => benchEvent(from + i, users));

/** Enables WEBHOOK for each user (one type each) through the settings API; returns `userId/type → secret`. */
export async function enableWebhooks(
  serviceBase: string,
  users: number,
  receiverBases: readonly string[],
  concurrency = 16,
): Promise<[string, string][]> {
  const secrets: [string, string][] = [];
  let next = 1;
  const worker = async () => {
    while (next <= users) {
      const userId = next++;
      const type = typeOfUser(userId);
      const webhookUrl = `${receiverBases[userId % receiverBases.length]}/hook/${userId}/${type}`;
      const response = await request(`${serviceBase}/api/v1/settings/notifications`, {
        method: 'PUT',
        headers: { authorization: userAuthorization(userId), 'content-type': 'application/json' },
        body: JSON.stringify({ type, channel: 'WEBHOOK', enabled: true, webhookUrl }),
      });
      const body = (await response.body.json()) as { webhookSecret?: string };
      if (response.statusCode !== 200 || !body.webhookSecret)
        throw new Error(`enabling user ${userId}: ${response.statusCode} ${JSON.stringify(body)}`);
      secrets.push([`${userId}/${type}`, body.webhookSecret]);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return secrets;
}

/** Publishes through WebhookPublisher.publishMany in a child process, one batch after the other. */
export async function publishViaIpc(service: IpcChild, events: readonly BenchEvent[], batchSize: number): Promise<number> {
  let queued = 0;
  for (let i = 0; i < events.length; i += batchSize) {
    queued += (await service.call<{ queued: number }>('publish', events.slice(i, i + batchSize))).queued;
  }
  return queued;
}

/** POSTs one batch to the internal endpoint; `payload.t` is the time of the call. */
export async function postBatch(
  serviceBase: string,
  events: readonly BenchEvent[],
): Promise<{ queuedDeliveries: number; eventIds: string[] }> {
  const t = wallMs();
  const body = JSON.stringify({ events: events.map((event) => ({ ...event, payload: { ...event.payload, t } })) });
  const response = await request(`${serviceBase}/api/v1/internal/notifications/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${INTERNAL_TOKEN}`, 'content-type': 'application/json' },
    body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 202) throw new Error(`publish to ${serviceBase}: ${response.statusCode} ${text.slice(0, 300)}`);
  return JSON.parse(text) as { queuedDeliveries: number; eventIds: string[] };
}

/** Round-robin over the instances, one batch in flight per instance, as a load balancer would spread them. */
export async function publishViaHttp(serviceBases: readonly string[], events: readonly BenchEvent[], batchSize: number): Promise<number> {
  const batches: BenchEvent[][] = [];
  for (let i = 0; i < events.length; i += batchSize) batches.push(events.slice(i, i + batchSize));
  let queued = 0;
  let next = 0;
  await Promise.all(
    serviceBases.map(async (base) => {
      while (next < batches.length) {
        const { queuedDeliveries } = await postBatch(base, batches[next++]);
        queued += queuedDeliveries;
      }
    }),
  );
  return queued;
}

/**
 * Waits until `expected` distinct events reached the receiver. When progress stalls, asks `diagnose`
 * (the database): deliveries rescheduled after a failed attempt are reported, not lost; otherwise throws.
 */
export async function waitForEvents(
  receiver: IpcChild,
  expected: number,
  diagnose?: () => Promise<DeliveryStates>,
  stallMs = 30_000,
): Promise<ReceiverStats & { rescheduled?: DeliveryStates }> {
  let last = -1;
  let lastProgressAt = Date.now();
  for (;;) {
    const stats = await receiver.call<ReceiverStats>('stats');
    if (stats.uniqueEvents >= expected) return stats;
    if (stats.uniqueEvents !== last) {
      last = stats.uniqueEvents;
      lastProgressAt = Date.now();
    } else if (Date.now() - lastProgressAt > stallMs) {
      const states = await diagnose?.();
      if (states && stats.uniqueEvents + states.rescheduled >= expected) return { ...stats, rescheduled: states };
      throw new Error(
        `lost events: ${expected - stats.uniqueEvents} of ${expected} never reached the receiver (no progress for ${stallMs} ms)${states ? `; stored: ${JSON.stringify(states)}` : ''}`,
      );
    }
    await sleep(50);
  }
}

/**
 * Waits until events `from`…`from + count` have all arrived at the receiver (or `deadline`, epoch ms, passes), once no
 * publish call is still unanswered.
 */
export async function waitForArrivals(
  receiver: IpcChild,
  load: { readonly from: number; readonly count: number; readonly published: () => number; readonly unanswered: () => number },
  deadline: number,
): Promise<void> {
  for (;;) {
    const arrived = await receiver.call<number>('arrivalsBetween', load.from, load.from + load.count);
    if ((load.unanswered() === 0 && arrived >= load.published()) || wallMs() > deadline) return;
    await sleep(100);
  }
}
