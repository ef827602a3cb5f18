import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { databaseOptions } from '../src/database/database-options';
import { serialTransactionsOf } from '../src/notifications/common/database/serial-transactions';
import { WEBHOOK_EVENT_TYPES } from '../src/notifications/catalog/event-catalog';
import { attemptRecord } from '../src/notifications/delivery/engine/attempt-record';
import { CLAIM_MODES, type ClaimMode } from '../src/notifications/delivery/engine/claim-mode';
import { DeliveryOutboxRepository } from '../src/notifications/delivery/engine/delivery-outbox.repository';
import type {
  ClaimedDelivery,
  EndpointProbe,
  EndpointSlot,
  Lease,
  NewEvent,
  OutboxStore,
  Placement,
  ProbeTaken,
} from '../src/notifications/delivery/engine/outbox-store';
import type { AttemptResult } from '../src/notifications/delivery/http/attempt-result';
import { DeliveryStatus } from '../src/notifications/delivery/webhook-delivery.entity';
import { InMemoryOutboxStore, SimTransaction } from './simulation/in-memory-outbox-store';
import { TEST_DATABASE_KINDS, type TestDatabase } from './support/test-databases';

/** What a case reads back of a delivery, whichever store holds it. */
interface DeliveryView {
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: number | null;
  lockedBy: string | null;
  lockedUntil: number | null;
  waitingReason: string | null;
  updatedAt: number;
}

/** One store under test, with what the cases need besides the OutboxStore contract: host transactions and a look at the rows. */
interface Harness {
  readonly store: OutboxStore;
  /** The store as another instance sees it: the same rows, none of this one's memory (which endpoints' slot rows it saw). */
  another(): OutboxStore;
  /** Runs `write` inside a host transaction, then commits it (or rolls it back). */
  within(write: (transaction: unknown) => Promise<void>, outcome: 'commit' | 'rollback'): Promise<void>;
  delivery(id: number): Promise<DeliveryView | null>;
  eventExists(id: string): Promise<boolean>;
  attemptsOf(deliveryId: number): Promise<number>;
  close(): Promise<void>;
}

const memory = {
  name: 'in-memory',
  async open(): Promise<Harness> {
    const store = new InMemoryOutboxStore();
    return {
      store,
      another: () => store,
      async within(write, outcome) {
        const transaction = new SimTransaction('host');
        await write(transaction);
        if (outcome === 'commit') transaction.commit();
        else transaction.rollback();
      },
      delivery: async (id) => {
        const row = store.deliveries.get(id);
        return row ? { ...row } : null;
      },
      eventExists: async (id) => store.events.has(id),
      attemptsOf: async (deliveryId) => store.attempts.filter((attempt) => attempt.deliveryId === deliveryId).length,
      close: async () => undefined,
    };
  },
};

// MySQL and MariaDB run the suite in each claim mode (TiDB and Vitess claim with the conditional update alone).
const sqlStores: { kind: (typeof TEST_DATABASE_KINDS)[number]; claimMode?: ClaimMode }[] = TEST_DATABASE_KINDS.flatMap((kind) =>
  kind.name === 'sqlite' ? [{ kind }] : CLAIM_MODES.map((claimMode) => ({ kind, claimMode })),
);

const sql = sqlStores.map(({ kind, claimMode }) => ({
  name: claimMode ? `${kind.name}, ${claimMode}` : kind.name,
  async open(): Promise<Harness> {
    const database: TestDatabase = await kind.create();
    const dataSource = new DataSource(databaseOptions(database.config));
    await dataSource.initialize();
    serialTransactionsOf(dataSource); // on SQLite, one transaction at a time, as the module installs it (AfterCommit)
    const nullable = (value: unknown) => (value === null ? null : Number(value));
    return {
      store: new DeliveryOutboxRepository(dataSource, { claimMode }),
      another: () => new DeliveryOutboxRepository(dataSource, { claimMode }),
      async within(write, outcome) {
        await dataSource
          .transaction(async (manager) => {
            await write(manager);
            if (outcome === 'rollback') throw new RolledBack();
          })
          .catch((error: unknown) => {
            if (!(error instanceof RolledBack)) throw error;
          });
      },
      async delivery(id) {
        const [row] = await dataSource.query<Record<string, unknown>[]>(
          'SELECT status, attempt_count, next_attempt_at, locked_by, locked_until, waiting_reason, updated_at FROM webhook_deliveries WHERE id = ?',
          [id],
        );
        if (!row) return null;
        return {
          status: row.status as DeliveryStatus,
          attemptCount: Number(row.attempt_count),
          nextAttemptAt: nullable(row.next_attempt_at),
          lockedBy: row.locked_by as string | null,
          lockedUntil: nullable(row.locked_until),
          waitingReason: row.waiting_reason as string | null,
          updatedAt: Number(row.updated_at),
        };
      },
      eventExists: async (id) => (await dataSource.query<unknown[]>('SELECT id FROM webhook_events WHERE id = ?', [id])).length > 0,
      attemptsOf: async (deliveryId) =>
        Number(
          (
            await dataSource.query<{ n: number | string }[]>('SELECT COUNT(*) AS n FROM webhook_delivery_attempts WHERE delivery_id = ?', [
              deliveryId,
            ])
          )[0].n,
        ),
      async close() {
        await dataSource.destroy();
        await database.drop();
      },
    };
  },
}));

class RolledBack extends Error {}

const NOW = 1_800_000_000_000;
const LEASE_MS = 60_000;
const [TYPE_A] = WEBHOOK_EVENT_TYPES;

const leaseAt = (now: number, ms = LEASE_MS): Lease => ({ token: randomUUID(), now, until: now + ms });
const event = (userId: number, type = TYPE_A): NewEvent => ({ id: randomUUID(), userId, type, body: `{"user":${userId}}` });
const isProbe = (taken: ProbeTaken): taken is EndpointProbe => 'holder' in taken;
/** The probe taken; the test fails when another instance held it. */
const probeOf = (taken: ProbeTaken): EndpointProbe => {
  if (!isProbe(taken)) throw new Error(`the probe is held elsewhere until ${taken.heldUntil}`);
  return taken;
};
const parkedUntil = (at: number): Placement => ({ parkUntil: at, reason: 'circuit open' });

const result = (outcome: AttemptResult['outcome'], durationMs = 100): AttemptResult => ({
  outcome,
  statusCode: outcome === 'success' ? 200 : outcome === 'http_error' ? 503 : null,
  durationMs,
  error: outcome === 'success' ? null : outcome,
  responseExcerpt: null,
});

describe.each([memory, ...sql])('OutboxStore conformance: $name', (kind) => {
  let harness: Harness;
  let store: OutboxStore;

  beforeEach(async () => {
    harness = await kind.open();
    store = harness.store;
  });
  afterEach(async () => {
    await harness.close();
  });

  /** Stores events (each placed as given) and returns the leased claims and the deliveries' ids in event order. */
  const enqueue = async (placed: [NewEvent, Placement][], lease = leaseAt(NOW)) => {
    const placements = new Map(placed.map(([e, placement]) => [e.id, placement]));
    const claims = await store.enqueue(
      placed.map(([e]) => e),
      (e) => placements.get(e.id)!,
      lease,
    );
    return claims;
  };

  /** A delivery that ended with `status` after one attempt (leased, then recorded). */
  const finished = async (userId: number, status: DeliveryStatus.DELIVERED | DeliveryStatus.FAILED, at = NOW) => {
    const e = event(userId);
    const [claim] = await enqueue([[e, 'lease']], leaseAt(at));
    const record =
      status === DeliveryStatus.DELIVERED
        ? attemptRecord(1, at, result('success'), at + 100)
        : { startedAt: at, result: result('http_error'), status: DeliveryStatus.FAILED, nextAttemptAt: null };
    expect(await store.recordAttempts([{ claim, record }])).toEqual([true]);
    return { event: e, claim };
  };

  it('enqueue places each delivery as told: leased (returned with its body), due now, or parked until a time', async () => {
    const [leased, due, parked] = [event(1), event(1), event(2)];
    const lease = leaseAt(NOW);
    const claims = await enqueue(
      [
        [leased, 'lease'],
        [due, 'due'],
        [parked, parkedUntil(NOW + 30_000)],
      ],
      lease,
    );
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ eventId: leased.id, userId: 1, type: TYPE_A, attemptCount: 0, body: leased.body });
    expect(claims[0]).toMatchObject({ lockToken: lease.token, lockedUntil: lease.until });
    expect(await harness.delivery(claims[0].id)).toMatchObject({ status: 'PENDING', lockedBy: lease.token, lockedUntil: lease.until });
    const { claims: dueNow } = await store.claimDue(10, leaseAt(NOW));
    expect(dueNow.map((claim) => claim.eventId)).toEqual([due.id]);
    const { claims: afterPark } = await store.claimDue(10, leaseAt(NOW + 30_000));
    expect(afterPark.map((claim) => claim.eventId)).toEqual([parked.id]);
    expect(await harness.delivery(afterPark[0].id)).toMatchObject({ nextAttemptAt: NOW + 30_000, waitingReason: 'circuit open' });
  });

  it('claims only due deliveries whose lease is free, oldest due first; anyDue agrees', async () => {
    await enqueue([[event(1), 'lease']]);
    await enqueue([[event(1), parkedUntil(NOW + 5_000)]]);
    expect(await store.anyDue(NOW)).toBe(false);
    expect(await store.claimDue(10, leaseAt(NOW))).toEqual({ claims: [], exhausted: true, excluded: [] });
    const later = event(2);
    const earlier = event(3);
    await enqueue([[later, 'due']], leaseAt(NOW + 2_000));
    await enqueue([[earlier, 'due']], leaseAt(NOW + 1_000));
    expect(await store.anyDue(NOW + 2_000)).toBe(true);
    const claimed = await store.claimDue(10, leaseAt(NOW + 2_000));
    expect(claimed.claims.map((claim) => claim.eventId)).toEqual(expect.arrayContaining([earlier.id, later.id]));
    expect(claimed.claims).toHaveLength(2);
    expect(claimed.exhausted).toBe(true);
    const oldestFirst = await enqueue([[event(4), 'due']], leaseAt(NOW + 3_000)).then(() => store.claimDue(1, leaseAt(NOW + 6_000)));
    expect(oldestFirst.claims.map((claim) => claim.userId)).toEqual([4]); // due at NOW + 3 s, before the parked one (NOW + 5 s)
    expect(oldestFirst.exhausted).toBe(false);
  });

  it('never leases one delivery to two claims made at once', async () => {
    for (let i = 0; i < 40; i++) await enqueue([[event(1 + (i % 5)), 'due']]);
    const [first, second] = [leaseAt(NOW), leaseAt(NOW)];
    const claimed = await Promise.all([store.claimDue(30, first), store.claimDue(30, second)]);
    const [a, b] = claimed.map(({ claims }) => claims.map((claim) => claim.id));
    expect(a.filter((id) => b.includes(id))).toEqual([]);
    expect(a.length + b.length).toBeGreaterThanOrEqual(30);
    for (const [index, lease] of [first, second].entries())
      for (const claim of claimed[index].claims) expect((await harness.delivery(claim.id))?.lockedBy).toBe(lease.token);
  });

  it('retakes a delivery whose lease expired, and refuses the record of the lease that was lost', async () => {
    const first = leaseAt(NOW, 10_000);
    const [lost] = await enqueue([[event(1), 'lease']], first);
    expect((await store.claimDue(10, leaseAt(NOW + 10_000))).claims).toEqual([]); // ends at until, not before
    const second = leaseAt(NOW + 10_001);
    const { claims } = await store.claimDue(10, second);
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ id: lost.id, lockToken: second.token, attemptCount: 0 });
    const failed = attemptRecord(1, NOW, result('timeout', 5_000), NOW + 5_000);
    const kept = attemptRecord(1, NOW + 10_001, result('http_error'), NOW + 10_101);
    expect(
      await store.recordAttempts([
        { claim: lost, record: failed },
        { claim: claims[0], record: kept },
      ]),
    ).toEqual([false, true]);
    expect(await harness.attemptsOf(lost.id)).toBe(1);
    expect(await harness.delivery(lost.id)).toMatchObject({
      status: 'PENDING',
      attemptCount: 1,
      nextAttemptAt: kept.nextAttemptAt,
      lockedBy: null,
      updatedAt: NOW + 10_101,
    });
  });

  it('shares a claim between users: each topped up to its share, a user holding it left out', async () => {
    for (let i = 0; i < 5; i++) await enqueue([[event(1), 'due']], leaseAt(NOW + i));
    for (let i = 0; i < 2; i++) await enqueue([[event(2), 'due']], leaseAt(NOW + 10 + i));
    const shared = await store.claimDue(4, leaseAt(NOW + 100), { perUser: 2, heldByUser: new Map([[1, 1]]) });
    expect(shared.claims.filter((claim) => claim.userId === 1)).toHaveLength(1);
    expect(shared.claims.filter((claim) => claim.userId === 2)).toHaveLength(2);
    expect(shared.exhausted).toBe(false); // user 1's other rows were passed over
    expect(shared.excluded).toEqual([]);
    const left = await store.claimDue(4, leaseAt(NOW + 100), { perUser: 2, heldByUser: new Map([[1, 2]]) });
    expect(left).toEqual({ claims: [], exhausted: true, excluded: [1] });
  });

  it('releases leases still held with their token: the deliveries are due at once', async () => {
    const [claim] = await enqueue([[event(1), 'lease']]);
    await store.release([{ ...claim, lockToken: randomUUID() }]);
    expect((await store.claimDue(10, leaseAt(NOW))).claims).toEqual([]);
    await store.release([claim]);
    expect(await harness.delivery(claim.id)).toMatchObject({ lockedBy: null, lockedUntil: null, status: 'PENDING' });
    expect((await store.claimDue(10, leaseAt(NOW))).claims.map((c) => c.id)).toEqual([claim.id]);
  });

  it('cancels a delivery only with its lease token', async () => {
    const [claim] = await enqueue([[event(1), 'lease']]);
    expect(await store.cancel({ ...claim, lockToken: randomUUID() }, NOW + 5, 'off')).toBe(false);
    expect(await store.cancel(claim, NOW + 5, 'webhook disabled')).toBe(true);
    expect(await harness.delivery(claim.id)).toMatchObject({
      status: 'CANCELLED',
      nextAttemptAt: null,
      lockedBy: null,
      updatedAt: NOW + 5,
    });
    expect(await store.cancel(claim, NOW + 6, 'again')).toBe(false);
  });

  it('records a success as DELIVERED and a last failure as FAILED, with the attempt rows', async () => {
    const { claim: delivered } = await finished(1, DeliveryStatus.DELIVERED);
    const { claim: failed } = await finished(1, DeliveryStatus.FAILED);
    expect(await harness.delivery(delivered.id)).toMatchObject({ status: 'DELIVERED', attemptCount: 1, nextAttemptAt: null });
    expect(await harness.delivery(failed.id)).toMatchObject({ status: 'FAILED', attemptCount: 1, nextAttemptAt: null });
    expect(await harness.attemptsOf(delivered.id)).toBe(1);
    expect(await harness.attemptsOf(failed.id)).toBe(1);
  });

  it('answers a record tried again after its commit (its answer lost) as stored, and stores it once', async () => {
    const [claim] = await enqueue([[event(1), 'lease']]);
    const record = attemptRecord(1, NOW, result('http_error'), NOW + 100);
    expect(await store.recordAttempts([{ claim, record }])).toEqual([true]);
    expect(await store.recordAttempts([{ claim, record }])).toEqual([true]);
    expect(await harness.attemptsOf(claim.id)).toBe(1);
    expect(await harness.delivery(claim.id)).toMatchObject({ status: 'PENDING', attemptCount: 1, lockedBy: null });
    // The same attempt number started at another time is another try (another lease's): refused.
    expect(await store.recordAttempts([{ claim, record: { ...record, startedAt: NOW + 1 } }])).toEqual([false]);
  });

  it('enqueueWithin writes with the host transaction: leased after its commit, nothing after a rollback', async () => {
    const committed = event(1);
    const rolledBack = event(1);
    const commitLease = leaseAt(NOW);
    const rollbackLease = leaseAt(NOW);
    await harness.within((tx) => store.enqueueWithin(tx, [committed], () => 'lease', commitLease), 'commit');
    await harness.within((tx) => store.enqueueWithin(tx, [rolledBack], () => 'lease', rollbackLease), 'rollback');
    expect((await store.leasedWith(commitLease)).map((claim) => claim.eventId)).toEqual([committed.id]);
    expect(await store.leasedWith(rollbackLease)).toEqual([]);
    expect(await harness.eventExists(rolledBack.id)).toBe(false);
  });

  it('enqueueAgain starts a new cycle of a stored event, names the running one while it runs, and none when the event is gone', async () => {
    const { event: e, claim } = await finished(1, DeliveryStatus.DELIVERED);
    const again = await store.enqueueAgain(e, 'lease', leaseAt(NOW + 1_000));
    expect(again).toMatchObject({ eventId: e.id, attemptCount: 0, body: e.body });
    const started = again as ClaimedDelivery;
    expect(started.id).toBeGreaterThan(claim.id);
    expect(await store.enqueueAgain(e, 'lease', leaseAt(NOW + 2_000))).toEqual({ running: started.id });
    expect(await store.enqueueAgain(event(1), 'lease', leaseAt(NOW + 1_000))).toBeNull();
  });

  it('enqueueAgain without a lease names the new delivery, due and free for any claim', async () => {
    const { event: e, claim } = await finished(1, DeliveryStatus.FAILED);
    const again = await store.enqueueAgain(e, 'due', leaseAt(NOW + 1_000));
    expect(again).toEqual({ queued: expect.any(Number) as number });
    const { queued } = again as { queued: number };
    expect(queued).toBeGreaterThan(claim.id);
    expect(await store.enqueueAgain(e, 'due', leaseAt(NOW + 2_000))).toEqual({ running: queued });
    const { claims } = await store.claimDue(10, leaseAt(NOW + 1_000));
    expect(claims.map((taken) => taken.id)).toEqual([queued]);
  });

  it('keeps the trace context an event was stored with on every delivery of it: leased, claimed, redelivered, recovered', async () => {
    const trace = {
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
      parentId: '00f067aa0ba902b7',
      sampled: true,
      traceState: 'rojo=1,congo=2',
    };
    const traced = { ...event(1), trace };
    const untraced = event(1);
    const [leased] = await enqueue([[traced, 'lease']]);
    expect(leased.trace).toEqual(trace);
    await enqueue([[untraced, 'due']]);
    const { claims } = await store.claimDue(10, leaseAt(NOW));
    expect(claims.map((claim) => [claim.eventId, claim.trace])).toEqual([[untraced.id, undefined]]);
    const record = { startedAt: NOW + 100, result: result('http_error'), status: DeliveryStatus.FAILED, nextAttemptAt: null };
    const delivered = attemptRecord(1, NOW + 100, result('success'), NOW + 200);
    expect(
      await store.recordAttempts([
        { claim: leased, record },
        { claim: claims[0], record: delivered },
      ]),
    ).toEqual([true, true]);
    const recovered = await store.recoverFailed({ userId: 1, since: NOW, until: NOW + 1_000 }, 10, () => 'lease', leaseAt(NOW + 200));
    expect(recovered).toBe(1);
    const { claims: again } = await store.claimDue(10, leaseAt(NOW + 60_000 + 300));
    expect(again.map((claim) => [claim.eventId, claim.trace])).toEqual([[traced.id, trace]]);
    await store.recordAttempts([{ claim: again[0], record: { ...record, startedAt: NOW + 60_400 } }]);
    expect(await store.enqueueAgain(traced, 'lease', leaseAt(NOW + 70_000))).toMatchObject({ eventId: traced.id, trace });
  });

  it('nextLeaseExpiry answers when the earliest running lease ends', async () => {
    expect(await store.nextLeaseExpiry(NOW)).toBeNull();
    await store.enqueue([event(1)], () => 'lease', leaseAt(NOW, 30_000));
    await store.enqueue([event(2)], () => 'lease', leaseAt(NOW, 10_000));
    expect(await store.nextLeaseExpiry(NOW)).toBe(NOW + 10_000);
    expect(await store.nextLeaseExpiry(NOW + 20_000)).toBe(NOW + 30_000);
  });

  it("recoverFailed queues the FAILED deliveries in the window that are still their event's latest, once", async () => {
    const { claim: alone } = await finished(1, DeliveryStatus.FAILED, NOW);
    const { event: redelivered } = await finished(1, DeliveryStatus.FAILED, NOW + 10);
    await store.enqueueAgain(redelivered, 'due', leaseAt(NOW + 20));
    await finished(2, DeliveryStatus.FAILED, NOW);
    await finished(1, DeliveryStatus.FAILED, NOW - 60_000); // before the window
    const window = { userId: 1, since: NOW - 1_000, until: NOW + 60_000 };
    const placed: number[] = [];
    const queued = await store.recoverFailed(window, 100, (index) => (placed.push(index), parkedUntil(NOW + 1_000)), leaseAt(NOW + 30));
    expect(queued).toBe(1);
    expect(placed).toEqual([0]);
    const { claims } = await store.claimDue(10, leaseAt(NOW + 1_000));
    expect(claims.map((claim) => claim.eventId)).toEqual(expect.arrayContaining([alone.eventId, redelivered.id]));
    expect(await store.recoverFailed(window, 100, () => 'due', leaseAt(NOW + 2_000))).toBe(0);
  });

  it('recoverFailed never queues an event that was delivered, also once retention purged that delivery', async () => {
    const { event: e } = await finished(1, DeliveryStatus.FAILED, NOW);
    const again = (await store.enqueueAgain(e, 'lease', leaseAt(NOW + 10))) as ClaimedDelivery;
    expect(await store.recordAttempts([{ claim: again, record: attemptRecord(1, NOW + 10, result('success'), NOW + 20) }])).toEqual([true]);
    const window = { userId: 1, since: NOW - 1_000, until: NOW + 60_000 };
    expect(await store.recoverFailed(window, 100, () => 'due', leaseAt(NOW + 30))).toBe(0);

    expect(await store.purgeBatch(DeliveryStatus.DELIVERED, NOW + 5_000, 10)).toMatchObject({ deliveries: 1, events: 0 });
    expect(await store.recoverFailed(window, 100, () => 'due', leaseAt(NOW + 40))).toBe(0);
  });

  it('purges finished deliveries with their attempts, and their events once no delivery refers to them', async () => {
    const { event: gone } = await finished(1, DeliveryStatus.DELIVERED, NOW);
    const { event: kept } = await finished(1, DeliveryStatus.DELIVERED, NOW);
    await store.enqueueAgain(kept, 'due', leaseAt(NOW + 1));
    await finished(1, DeliveryStatus.FAILED, NOW);
    await finished(1, DeliveryStatus.DELIVERED, NOW + 10_000); // after the cut-off
    expect(await store.purgeBatch(DeliveryStatus.DELIVERED, NOW + 5_000, 1)).toMatchObject({ matched: 1, deliveries: 1, attempts: 1 });
    const rest = await store.purgeBatch(DeliveryStatus.DELIVERED, NOW + 5_000, 10);
    expect(rest).toMatchObject({ matched: 1, deliveries: 1, attempts: 1 });
    expect(await harness.eventExists(gone.id)).toBe(false);
    expect(await harness.eventExists(kept.id)).toBe(true);
    expect(await store.purgeBatch(DeliveryStatus.DELIVERED, NOW + 5_000, 10)).toEqual({
      matched: 0,
      deliveries: 0,
      attempts: 0,
      events: 0,
    });
    expect(await store.queueDepth(NOW + 5_000, 100)).toEqual({ due: 1, inFlight: 0, failed: 1 });
  });

  it("claimProbe lets one instance probe an endpoint at a time; probeEnded frees it (an answer) or holds it (a failure's cool-down)", async () => {
    const endpoint = '7 hooks.example.com:8443';
    const claims = await Promise.all([store.claimProbe(endpoint, NOW, NOW + 20_000), store.claimProbe(endpoint, NOW, NOW + 20_000)]);
    const [probe, ...more] = claims.filter(isProbe);
    expect(more).toHaveLength(0);
    expect(claims.filter((taken) => !isProbe(taken))).toEqual([{ heldUntil: NOW + 20_000 }]);
    expect(await store.claimProbe(endpoint, NOW + 19_999, NOW + 40_000)).toEqual({ heldUntil: NOW + 20_000 });
    expect(await store.claimProbe('8 hooks.example.com:8443', NOW, NOW + 20_000)).toHaveProperty('holder'); // another user's endpoint
    await store.probeEnded(probe, NOW + 60_000); // the probe failed: its circuit is open for a longer cool-down
    expect(await store.claimProbe(endpoint, NOW + 30_000, NOW + 50_000)).toEqual({ heldUntil: NOW + 60_000 });
    const next = probeOf(await store.claimProbe(endpoint, NOW + 60_000, NOW + 80_000));
    await store.probeEnded(next, null); // it got an answer: any instance may probe at once
    expect(await store.claimProbe(endpoint, NOW + 60_001, NOW + 80_000)).toHaveProperty('holder');
    expect(await store.claimProbe(endpoint, NOW + 60_002, NOW + 80_000)).toEqual({ heldUntil: NOW + 80_000 });
  });

  it('probeEnded of a probe whose hold ran out and was taken since leaves the new probe alone (seed 883)', async () => {
    const endpoint = '7 hooks.example.com:8443';
    await store.releaseSlots([(await store.takeSlot(endpoint, 4, NOW, NOW + 20_000, false)) as EndpointSlot]); // its rows, made by a request
    const late = probeOf(await store.claimProbe(endpoint, NOW, NOW + 20_000));
    const current = probeOf(await store.claimProbe(endpoint, NOW + 20_000, NOW + 40_000)); // the first one's hold ran out
    await store.probeEnded(late, null); // its end arrives late: an answer
    await store.probeEnded(late, NOW + 90_000); // or a failure
    expect(await store.claimProbe(endpoint, NOW + 21_000, NOW + 41_000)).toEqual({ heldUntil: NOW + 40_000 });
    expect(await store.takeSlot(endpoint, 4, NOW + 21_000, NOW + 41_000, true)).toEqual({ openUntil: NOW + 40_000 });
    await store.probeEnded(current, NOW + 100_000); // its own end still counts
    expect(await store.claimProbe(endpoint, NOW + 99_999, NOW + 120_000)).toEqual({ heldUntil: NOW + 100_000 });
  });

  it('takeSlot gives at most `cap` slots of an endpoint at once, all takers together; a released or expired slot is free again', async () => {
    const endpoint = '7 hooks.example.com:8443';
    const takes = await Promise.all(Array.from({ length: 6 }, () => store.takeSlot(endpoint, 4, NOW, NOW + 20_000, false)));
    const held = takes.filter((taken): taken is EndpointSlot => 'holder' in taken);
    expect(held).toHaveLength(4);
    expect(new Set(held.map((slot) => slot.holder)).size).toBe(4);
    expect(takes.filter((taken) => 'busy' in taken)).toHaveLength(2);
    expect(await store.takeSlot('8 hooks.example.com:8443', 4, NOW, NOW + 20_000, false)).toMatchObject({ heldUntil: NOW + 20_000 });
    await store.releaseSlots(held.slice(0, 1));
    await store.releaseSlots(held.slice(0, 1)); // released twice: still one slot, not two
    expect(await store.takeSlot(endpoint, 4, NOW - 5_000, NOW + 20_000, false)).toHaveProperty('holder'); // free for a clock behind too
    expect(await store.takeSlot(endpoint, 4, NOW + 1_000, NOW + 20_000, false)).toEqual({ busy: true });
    expect(await store.takeSlot(endpoint, 5, NOW + 1_000, NOW + 20_000, false)).toHaveProperty('holder'); // a larger cap: one more
    expect(await store.takeSlot(endpoint, 2, NOW + 19_999, NOW + 40_000, false)).toEqual({ busy: true });
    expect(await store.takeSlot(endpoint, 2, NOW + 20_000, NOW + 40_000, false)).toHaveProperty('holder'); // its holder's lease ended
  });

  it('takeSlot calls made together (a burst of attempts, grouped on MySQL/MariaDB) each answer as one alone would', async () => {
    const [a, b, c, d, e] = ['1 a.example', '2 b.example', '3 c.example', '4 d.example', '5 e.example'];
    const before = await Promise.all([store.takeSlot(a, 4, NOW, NOW + 20_000, false), store.takeSlot(b, 1, NOW, NOW + 20_000, false)]);
    await store.releaseSlots([(await store.takeSlot(c, 4, NOW, NOW + 20_000, false)) as EndpointSlot]);
    await store.circuitOpened(c, NOW + 30_000);
    const takes = await Promise.all([
      store.takeSlot(a, 4, NOW + 1_000, NOW + 21_000, false), // slot 0 held: another
      store.takeSlot(b, 1, NOW + 1_000, NOW + 21_000, false), // its one slot held
      store.takeSlot(c, 4, NOW + 1_000, NOW + 60_000, false), // its circuit open
      store.takeSlot(d, 2, NOW + 1_000, NOW + 21_000, false), // fresh, twice
      store.takeSlot(d, 2, NOW + 1_000, NOW + 21_000, false),
      store.takeSlot(e, 4, NOW + 1_000, NOW + 21_000, false), // fresh
    ]);
    expect(takes.map((taken) => ('holder' in taken ? { endpoint: taken.endpoint, heldUntil: taken.heldUntil } : taken))).toEqual([
      { endpoint: a, heldUntil: NOW + 21_000 },
      { busy: true },
      { openUntil: NOW + 30_000 },
      { endpoint: d, heldUntil: NOW + 21_000 },
      { endpoint: d, heldUntil: NOW + 21_000 },
      { endpoint: e, heldUntil: NOW + 21_000 },
    ]);
    const held = [...before, ...takes].filter((taken): taken is EndpointSlot => 'holder' in taken);
    expect(new Set(held.map((slot) => slot.holder)).size).toBe(held.length);
    expect(await store.takeSlot(d, 2, NOW + 2_000, NOW + 22_000, false)).toEqual({ busy: true }); // both of d's slots are held
    expect(await store.takeSlot(c, 1, NOW + 30_000, NOW + 50_000, true)).toHaveProperty('holder'); // c's slot 0 went back at once
    await store.releaseSlots(held);
    expect(await store.takeSlot(b, 1, NOW + 2_000, NOW + 22_000, false)).toHaveProperty('holder');
  });

  it('purgeFreeSlots deletes every slot row of an endpoint none of whose slots is held, in key order; a take makes them again, circuit and all', async () => {
    const [a, b, c] = ['1 a.example', '2 b.example', '3 c.example'];
    await store.releaseSlots([(await store.takeSlot(a, 4, NOW, NOW + 20_000, false)) as EndpointSlot]);
    expect(await store.takeSlot(b, 4, NOW, NOW + 20_000, false)).toHaveProperty('holder'); // b keeps a slot held
    await store.releaseSlots([(await store.takeSlot(c, 4, NOW, NOW + 20_000, false)) as EndpointSlot]);
    await store.circuitOpened(c, NOW + 30_000);

    expect(await store.purgeFreeSlots(NOW, '', 1)).toEqual({ matched: 1, endpoints: 1, last: a });
    expect(await store.purgeFreeSlots(NOW, a, 5)).toEqual({ matched: 1, endpoints: 1, last: c });
    expect(await store.purgeFreeSlots(NOW, c, 5)).toEqual({ matched: 0, endpoints: 0, last: null });
    expect(await store.purgeFreeSlots(NOW + 20_000, '', 5)).toEqual({ matched: 1, endpoints: 1, last: b }); // b's hold ended

    // Another instance's first take of c: its circuit is still open, and its rows are made once it lets a prober through.
    const other = harness.another();
    expect(await other.takeSlot(c, 4, NOW + 1_000, NOW + 21_000, false)).toEqual({ openUntil: NOW + 30_000 });
    expect(await other.takeSlot(c, 4, NOW + 30_000, NOW + 50_000, true)).toHaveProperty('holder');
    // a's rows are made again, all of them: its cap holds, for this instance and the other.
    const takes = await Promise.all([store, other, store, other, store].map((s) => s.takeSlot(a, 4, NOW + 1_000, NOW + 21_000, false)));
    expect(takes.filter((taken) => 'holder' in taken)).toHaveLength(4);
    expect(takes.filter((taken) => 'busy' in taken)).toHaveLength(1);
  });

  it('circuitOpened stops every taker until a probe: a prober once the cool-down is over, the others not before its answer', async () => {
    const endpoint = '7 hooks.example.com:8443';
    expect(await store.takeSlot(endpoint, 4, NOW, NOW + 20_000, false)).toHaveProperty('holder');
    await store.circuitOpened(endpoint, NOW + 30_000);
    await store.circuitOpened(endpoint, NOW + 25_000); // an earlier end written later does not shorten it
    expect(await store.takeSlot(endpoint, 4, NOW + 1_000, NOW + 20_000, false)).toEqual({ openUntil: NOW + 30_000 });
    expect(await store.takeSlot(endpoint, 4, NOW + 1_000, NOW + 20_000, true)).toEqual({ openUntil: NOW + 30_000 });
    expect(await store.takeSlot('8 hooks.example.com:8443', 4, NOW + 1_000, NOW + 20_000, false)).toHaveProperty('holder');
    expect(await store.takeSlot(endpoint, 4, NOW + 30_000, NOW + 50_000, false)).toEqual({ openUntil: NOW + 30_000 });
    expect(await store.takeSlot(endpoint, 4, NOW + 30_000, NOW + 50_000, true)).toHaveProperty('holder');
    const probe = probeOf(await store.claimProbe(endpoint, NOW + 30_000, NOW + 50_000));
    expect(await store.takeSlot(endpoint, 4, NOW + 31_000, NOW + 50_000, true)).toEqual({ openUntil: NOW + 50_000 }); // its probe runs
    await store.probeEnded(probe, null); // the probe got an answer: closed for all
    expect(await store.takeSlot(endpoint, 4, NOW + 32_000, NOW + 50_000, false)).toHaveProperty('holder');
  });

  it('countFailure counts an endpoint’s failures in a row over all callers; clearFailures starts it again', async () => {
    const endpoint = '7 hooks.example.com:8443';
    const counts = await Promise.all([store.countFailure(endpoint), store.countFailure(endpoint), store.countFailure(endpoint)]);
    expect(Math.max(...counts)).toBe(3);
    expect(await store.countFailure('8 hooks.example.com:8443')).toBe(1);
    await store.clearFailures(endpoint);
    expect(await store.countFailure(endpoint)).toBe(1);
  });

  it('queueDepth counts due, leased and FAILED deliveries, each capped', async () => {
    for (let i = 0; i < 3; i++) await enqueue([[event(1), 'due']]);
    await enqueue([[event(1), 'lease']], leaseAt(NOW, 1_000));
    await enqueue([[event(2), parkedUntil(NOW + 60_000)]]);
    await finished(3, DeliveryStatus.FAILED);
    expect(await store.queueDepth(NOW, 100)).toEqual({ due: 3, inFlight: 1, failed: 1 });
    expect(await store.queueDepth(NOW, 2)).toEqual({ due: 2, inFlight: 1, failed: 1 });
    expect(await store.queueDepth(NOW + 1_001, 100)).toEqual({ due: 4, inFlight: 0, failed: 1 }); // the lease expired
  });
});

// Where statements of two instances interleave (SQLite runs one transaction at a time, the in-memory store one call).
describe.each(TEST_DATABASE_KINDS.filter((kind) => kind.name !== 'sqlite'))('slot purges meeting other statements on $name', (kind) => {
  const endpoint = '7 hooks.example.com:8443';
  let database: TestDatabase;
  let dataSource: DataSource;
  let store: DeliveryOutboxRepository;

  beforeEach(async () => {
    database = await kind.create();
    dataSource = await new DataSource(databaseOptions(database.config)).initialize();
    store = new DeliveryOutboxRepository(dataSource);
    await store.releaseSlots([(await store.takeSlot(endpoint, 4, NOW, NOW + 20_000, false)) as EndpointSlot]);
  });
  afterEach(async () => {
    await dataSource.destroy();
    await database.drop();
  });

  /**
   * Runs `purges` while another instance's transaction has written slot 0 of the endpoint (`holder`, `heldUntil`) and
   * not committed: each purge still sees the rows as they were, then waits for that row (a statement of it on the slots,
   * seen running in the server); the transaction commits once all of them wait.
   */
  const whileSlot0Written = async <T>(slot0: { holder: string | null; heldUntil: number }, purges: () => Promise<T>[]): Promise<T[]> => {
    let started: Promise<T>[] = [];
    await dataSource.transaction('READ COMMITTED', async (manager) => {
      await manager.query('UPDATE webhook_endpoint_slots SET holder = ?, held_until = ? WHERE endpoint = ? AND slot = 0', [
        slot0.holder,
        slot0.heldUntil,
        endpoint,
      ]);
      started = purges();
      await until(async () => {
        const [{ n }] = await dataSource.query<{ n: number | string }[]>(
          "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE db = DATABASE() AND info LIKE '% webhook_endpoint_slots %' AND info NOT LIKE '%PROCESSLIST%'",
        );
        return Number(n) >= started.length;
      });
    });
    return Promise.all(started);
  };
  const rows = async () =>
    Number(
      (
        await dataSource.query<{ n: number | string }[]>('SELECT COUNT(*) AS n FROM webhook_endpoint_slots WHERE endpoint = ?', [endpoint])
      )[0].n,
    );

  it('keeps every row of an endpoint whose slot was taken between the purge picking it and deleting it', async () => {
    // A take in another instance: slot 0 held.
    const [purged] = await whileSlot0Written({ holder: randomUUID(), heldUntil: NOW + 20_000 }, () => [store.purgeFreeSlots(NOW, '', 10)]);
    expect(purged).toEqual({ matched: 1, endpoints: 0, last: endpoint });
    expect(await rows()).toBe(4);
  });

  it('deletes and counts an endpoint once when two instances purge it at the same time', async () => {
    // Slot 0 written free again (a release): both purges pick the endpoint, then one deletes it and the other finds it gone.
    const other = new DeliveryOutboxRepository(dataSource);
    const purged = await whileSlot0Written({ holder: null, heldUntil: 0 }, () => [
      store.purgeFreeSlots(NOW, '', 10),
      other.purgeFreeSlots(NOW, '', 10),
    ]);
    expect(purged.map((batch) => batch.matched)).toEqual([1, 1]);
    expect(purged[0].endpoints + purged[1].endpoints).toBe(1);
    expect(await rows()).toBe(0);
  });
});

/** Resolves once `condition` holds, asked again and again (a lock wait in the server has no event to await). */
async function until(condition: () => Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setImmediate(resolve));
}
