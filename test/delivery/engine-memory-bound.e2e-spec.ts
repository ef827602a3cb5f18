import type { EventType } from '../../src/notifications/catalog/event-catalog';
import { Clock } from '../../src/notifications/clock/clock';
import { DeliveryEvents } from '../../src/notifications/delivery/events/delivery-events.service';
import type { DeliverySettings } from '../../src/notifications/delivery/delivery-settings';
import type { AfterCommit } from '../../src/notifications/delivery/engine/after-commit.subscriber';
import { OutboxEngine, type Targets } from '../../src/notifications/delivery/engine/outbox-engine.service';
import type { NewEvent } from '../../src/notifications/delivery/engine/outbox-store';
import type { WebhookSender } from '../../src/notifications/delivery/http/webhook-sender';
import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import type { PreferencesService } from '../../src/notifications/preferences/preferences.service';
import { webhookKey } from '../../src/notifications/preferences/webhook-key';
import { InMemoryOutboxStore, SimTransaction } from '../simulation/in-memory-outbox-store';
import { soleOwnership } from '../support/sole-ownership';

/**
 * The engine's memory bound (the simulation's bounded-memory invariant): an instance never holds more leases than its
 * capacity, also when the leases come from a host transaction that commits later (seeds 704, 708, 1339, 1662, 2340,
 * 2665, 3048 and 3095 of the simulation) or from a redelivery while it is full (seed 1813).
 */
const NOW = Date.UTC(2030, 0, 1);
const TYPE = 'RATE_SPIKE' as EventType;
// One slot and the pessimistic attempt duration (the timeout) at first: floor((60 s - 5 s - 7 s) / 5 s) = 9 deliveries.
const CAPACITY = 9;
const settings: DeliverySettings = {
  concurrency: 1,
  perEndpointConcurrency: 3,
  circuitBreaker: { failuresToOpen: 3, coolDownMs: 30_000 },
  batchSize: 10,
  leaseMs: 60_000,
  timeoutMs: 5_000,
  shutdownGraceMs: 1_000,
  userAgent: 'test',
  role: 'all',
  wakeUrl: null,
};

class FixedClock extends Clock {
  now(): number {
    return NOW;
  }
}

let nextEvent = 1;
/** Events of users 1..count, one each: every one its own endpoint, so only the instance's capacity limits them. */
const events = (count: number, firstUser = 1): NewEvent[] =>
  Array.from({ length: count }, (_, i) => {
    const id = `e${nextEvent++}`;
    return { id, userId: firstUser + i, type: TYPE, body: JSON.stringify({ id }) };
  });
const targetsOf = (news: readonly NewEvent[]): Targets =>
  new Map(news.map((e) => [webhookKey(e.userId, e.type), { url: `https://u${e.userId}.example/hook`, secret: 'secret' }]));
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('the outbox engine holds no more leases than its capacity', () => {
  let store: InMemoryOutboxStore;
  let engine: OutboxEngine;
  let sent: string[];
  const leasedByAnyone = () =>
    [...store.deliveries.values()].filter(
      (row) => row.status === DeliveryStatus.PENDING && row.lockedBy !== null && row.lockedUntil! >= NOW,
    );

  beforeEach(() => {
    store = new InMemoryOutboxStore();
    sent = [];
    const sender = {
      send: (request: { headers: Record<string, string> }) => {
        sent.push(request.headers['x-service-event-id']);
        return new Promise(() => undefined); // the receiver never answers: what is admitted stays held
      },
      close: () => Promise.resolve(),
    };
    const preferences = { webhookTargets: () => Promise.resolve(new Map()) };
    const afterCommit = {
      transactionOf: (transaction: unknown) => transaction,
      defer: (transaction: SimTransaction, work: () => void, rolledBack?: () => void) => transaction.defer(work, rolledBack),
    };
    const clock = new FixedClock();
    engine = new OutboxEngine(
      store,
      preferences as unknown as PreferencesService,
      sender as unknown as WebhookSender,
      clock,
      new DeliveryEvents(),
      settings,
      afterCommit as unknown as AfterCommit,
      soleOwnership(clock, settings),
    );
  });

  it('counts what a host transaction leased until it commits: an enqueue meanwhile leases only the room left', async () => {
    const within = events(6);
    const tx = new SimTransaction('host');
    await engine.enqueueWithin(tx as never, within, targetsOf(within));
    const more = events(10, 100);
    await engine.enqueue(more, targetsOf(more));
    // Before the fix the enqueue saw the whole room (the host's 6 were counted nowhere): 9 leased, 15 after the commit.
    expect(leasedByAnyone()).toHaveLength(CAPACITY - 6);
    tx.commit();
    await turn();
    await turn();
    // The host's 6, leased with its commit, fill the room exactly: none more, none lost.
    expect(leasedByAnyone()).toHaveLength(CAPACITY);
  });

  it('gives the room back when the host transaction rolls back', async () => {
    const within = events(6);
    const tx = new SimTransaction('host');
    await engine.enqueueWithin(tx as never, within, targetsOf(within));
    tx.rollback();
    await turn();
    const more = events(10, 100);
    await engine.enqueue(more, targetsOf(more));
    expect(leasedByAnyone()).toHaveLength(CAPACITY);
  });

  it('leaves a redelivery due in the outbox, unleased, when the instance is full', async () => {
    const first = events(1);
    await store.enqueue(first, () => 'due', engine.lease()); // an event delivered before (not by this engine)
    const eventId = first[0].id;
    const done = [...store.deliveries.values()].find((row) => row.eventId === eventId)!;
    Object.assign(done, { status: DeliveryStatus.DELIVERED, nextAttemptAt: null });
    const fill = events(CAPACITY, 100);
    await engine.enqueue(fill, targetsOf(fill));
    expect(leasedByAnyone()).toHaveLength(CAPACITY);

    const enqueueAgain = store.enqueueAgain.bind(store);
    let mostLeased = 0;
    vi.spyOn(store, 'enqueueAgain').mockImplementation(async (...args) => {
      const result = await enqueueAgain(...args);
      mostLeased = Math.max(mostLeased, leasedByAnyone().length);
      return result;
    });
    const release = vi.spyOn(store, 'release');

    const again = await engine.redeliver({ id: eventId, userId: first[0].userId, type: TYPE });

    expect(again).toEqual({ started: expect.any(Number) as number });
    const started = store.deliveries.get((again as { started: number }).started)!;
    expect(started).toMatchObject({ eventId, status: DeliveryStatus.PENDING, lockedBy: null, nextAttemptAt: NOW });
    // Before the fix it was leased (one over the capacity) and released again.
    expect(mostLeased).toBe(CAPACITY);
    expect(release).not.toHaveBeenCalled();
  });
});
