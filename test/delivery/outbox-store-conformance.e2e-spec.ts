import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { databaseOptions } from '../../src/service/database/database-options';
import { serialTransactionsOf } from '../../src/notifications/common/database/serial-transactions';
import { WEBHOOK_EVENT_TYPES } from '../../src/notifications/catalog/event-catalog';
import { attemptRecord } from '../../src/notifications/delivery/engine/attempt-record';
import { CLAIM_MODES, type ClaimMode } from '../../src/notifications/delivery/engine/claim-mode';
import { DeliveryOutboxRepository } from '../../src/notifications/delivery/engine/delivery-outbox.repository';
import type {
  Claimed,
  ClaimedDelivery,
  Lease,
  NewEvent,
  OutboxStore,
  Placement,
} from '../../src/notifications/delivery/engine/outbox-store';
import type { QueueDepthReader } from '../../src/notifications/metrics/queue-depth';
import { QueueDepthRepository } from '../../src/notifications/metrics/queue-depth.repository';
import type { DeliveryPurge } from '../../src/notifications/retention/delivery-purge';
import { DeliveryPurgeRepository } from '../../src/notifications/retention/delivery-purge.repository';
import type { AttemptResult } from '../../src/notifications/delivery/http/attempt-result';
import { PartitionLeaseRepository } from '../../src/notifications/delivery/partitions/partition-lease.repository';
import type { PartitionLeases } from '../../src/notifications/delivery/partitions/partition-leases';
import { type Ownership, PARTITION_COUNT, partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { InMemoryOutboxStore, SimTransaction } from '../simulation/in-memory-outbox-store';
import { TEST_DATABASE_KINDS, type TestDatabase } from '../support/test-databases';

/** What a case reads back of a delivery, whichever store holds it. */
interface DeliveryView {
  partition: number;
  status: DeliveryStatus;
  attemptCount: number;
  nextAttemptAt: number | null;
  lockedBy: string | null;
  lockedUntil: number | null;
  waitingReason: string | null;
  updatedAt: number;
  sequence: number | null;
}

/** One store under test, with what the cases need besides the OutboxStore contract: host transactions and a look at the rows. */
interface Harness {
  readonly store: OutboxStore;
  /** Retention's deletes and the metrics' count, on the same rows. */
  readonly purge: DeliveryPurge;
  readonly depth: QueueDepthReader;
  /** The partitions table the store's claims by owner look at. */
  readonly leases: PartitionLeases;
  /** Runs `write` inside a host transaction, then commits it (or rolls it back). */
  within(write: (transaction: unknown) => Promise<void>, outcome: 'commit' | 'rollback'): Promise<void>;
  delivery(id: number): Promise<DeliveryView | null>;
  eventExists(id: string): Promise<boolean>;
  attemptsOf(deliveryId: number): Promise<number>;
  /** A new stream of `userId` (a webhook URL saved), ordered or not; its id. */
  stream(userId: number, ordered?: boolean): Promise<number>;
  /** Turns a stream's ordered delivery on or off (the settings API). */
  setOrdered(streamId: number, ordered: boolean): Promise<void>;
  /**
   * Another instance's claim whose transaction stays open until `commit` (after its UPDATE on MySQL with SKIP LOCKED,
   * after its plain read of due rows with the conditional update): on its own connection, so the store's own calls run
   * meanwhile.
   * None on SQLite, where the module runs one transaction at a time.
   */
  readonly openClaim?: (limit: number, lease: Lease, owned?: Ownership) => Promise<{ commit(): Promise<Claimed> }>;
  close(): Promise<void>;
}

const memory = {
  name: 'in-memory',
  /** How a claim meets another one whose transaction is open (the model is MySQL's default, SKIP LOCKED). */
  interleaves: 'skip-locked' as ClaimMode | null,
  async open(): Promise<Harness> {
    const store = new InMemoryOutboxStore();
    return {
      store,
      purge: store,
      depth: store,
      leases: store.leases,
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
      stream: async (userId, ordered = false) => store.addStream(userId, ordered),
      setOrdered: async (streamId, ordered) => {
        store.streams.get(streamId)!.ordered = ordered;
      },
      openClaim: async (limit, lease, owned) => {
        const open = store.openClaim(limit, lease, undefined, owned);
        return { commit: async () => open.commit() };
      },
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
  interleaves: claimMode ?? null,
  async open(): Promise<Harness> {
    const database: TestDatabase = await kind.create();
    const dataSource = new DataSource(databaseOptions(database.config));
    await dataSource.initialize();
    serialTransactionsOf(dataSource); // on SQLite, one transaction at a time, as the module installs it (AfterCommit)
    const other = kind.name === 'sqlite' ? null : await heldOpenClaims(database, claimMode);
    const nullable = (value: unknown) => (value === null ? null : Number(value));
    return {
      store: new DeliveryOutboxRepository(dataSource, { claimMode }),
      purge: new DeliveryPurgeRepository(dataSource),
      depth: new QueueDepthRepository(dataSource),
      leases: new PartitionLeaseRepository(dataSource),
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
          'SELECT user_partition, status, attempt_count, next_attempt_at, locked_by, locked_until, waiting_reason, updated_at, sequence FROM webhook_deliveries WHERE id = ?',
          [id],
        );
        if (!row) return null;
        return {
          partition: Number(row.user_partition),
          status: row.status as DeliveryStatus,
          attemptCount: Number(row.attempt_count),
          nextAttemptAt: nullable(row.next_attempt_at),
          lockedBy: row.locked_by as string | null,
          lockedUntil: nullable(row.locked_until),
          waitingReason: row.waiting_reason as string | null,
          updatedAt: Number(row.updated_at),
          sequence: nullable(row.sequence),
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
      async stream(userId, ordered = false) {
        const urlHash = randomUUID().replace(/-/g, '').padEnd(64, '0');
        await dataSource.query('INSERT INTO webhook_streams (user_id, url_hash, ordered) VALUES (?, ?, ?)', [
          userId,
          urlHash,
          ordered ? 1 : 0,
        ]);
        const [row] = await dataSource.query<{ id: number | string }[]>('SELECT id FROM webhook_streams WHERE url_hash = ?', [urlHash]);
        return Number(row.id);
      },
      async setOrdered(streamId, ordered) {
        await dataSource.query('UPDATE webhook_streams SET ordered = ? WHERE id = ?', [ordered ? 1 : 0, streamId]);
      },
      openClaim: other?.openClaim,
      async close() {
        await other?.close();
        await dataSource.destroy();
        await database.drop();
      },
    };
  },
}));

class RolledBack extends Error {}

/**
 * Claims of another instance, on a connection pool of their own, each held open until the case lets it go on: with SKIP
 * LOCKED after its UPDATE (every lock it takes is held), with the conditional update after its plain read of due rows
 * (its UPDATE would wait for the locks of the claim running meanwhile).
 */
async function heldOpenClaims(database: TestDatabase, claimMode?: ClaimMode) {
  const dataSource = new DataSource(databaseOptions(database.config));
  await dataSource.initialize();
  let hold: { reached: () => void; released: Promise<void> } | null = null;
  const createQueryRunner = dataSource.createQueryRunner.bind(dataSource);
  dataSource.createQueryRunner = (mode) => {
    const runner = createQueryRunner(mode);
    const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
    runner.query = (async (...args: unknown[]) => {
      const result = await query(...args);
      const current = hold;
      const sql = String(args[0]);
      const holdPoint =
        claimMode === 'conditional-update'
          ? /^\s*SELECT[\s\S]*FROM [`"]?webhook_deliveries/i.test(sql)
          : /^\s*UPDATE [`"]?webhook_deliveries/i.test(sql);
      if (current && holdPoint) {
        hold = null;
        current.reached();
        await current.released;
      }
      return result;
    }) as typeof runner.query;
    return runner;
  };
  const store = new DeliveryOutboxRepository(dataSource, { claimMode });
  return {
    async openClaim(limit: number, lease: Lease, owned?: Ownership) {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const reached = new Promise<void>((resolve) => (hold = { reached: resolve, released }));
      const claimed = store.claimDue(limit, lease, undefined, owned);
      await Promise.race([reached, claimed]);
      return {
        commit: () => {
          release();
          return claimed;
        },
      };
    },
    close: () => dataSource.destroy(),
  };
}

const NOW = 1_800_000_000_000;
const LEASE_MS = 60_000;
const [TYPE_A] = WEBHOOK_EVENT_TYPES;

const leaseAt = (now: number, ms = LEASE_MS): Lease => ({ token: randomUUID(), now, until: now + ms });
const event = (userId: number, type = TYPE_A): NewEvent => ({ id: randomUUID(), userId, type, body: `{"user":${userId}}` });
const parkedUntil = (at: number): Placement => ({ parkUntil: at, reason: 'circuit open' });

const result = (outcome: AttemptResult['outcome'], durationMs = 100): AttemptResult => ({
  outcome,
  statusCode: outcome === 'success' ? 200 : outcome === 'http_error' ? 503 : null,
  durationMs,
  error: outcome === 'success' ? null : outcome,
  responseExcerpt: null,
});

const EVERY_PARTITION = Array.from({ length: PARTITION_COUNT }, (_, partition) => partition);

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

  /** A claim by `holder` for `partitions` (its memory's view), each lease required to run past `leasedPast`. */
  const own = (holder: string, leasedPast = NOW, partitions: readonly number[] = EVERY_PARTITION): Ownership => ({
    holder,
    leasedPast,
    partitions,
  });

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

  /** Six deliveries of six users, due one millisecond apart in user order; a claim at NOW + 10 finds them all due. */
  const sixDue = async () => {
    for (let userId = 1; userId <= 6; userId++) await enqueue([[event(userId), 'due']], leaseAt(NOW + userId));
  };
  const users = ({ claims }: Claimed) => claims.map((claim) => claim.userId).sort((x, y) => x - y);

  if (kind.interleaves !== null)
    it("in an ordered stream, takes nothing behind the first PENDING delivery while another claim's open transaction holds it", async () => {
      const streamId = await harness.stream(1, true);
      const [head, next] = [
        { ...event(1), streamId },
        { ...event(1), streamId },
      ];
      await enqueue([
        [head, 'due'],
        [next, 'due'],
      ]);
      const other = await harness.openClaim!(10, leaseAt(NOW));
      const meanwhile = await store.claimDue(10, leaseAt(NOW));
      const committed = await other.commit();
      // One of the two leased the head (which one depends on the claim mode); neither took the next.
      expect([...meanwhile.claims, ...committed.claims].map((claim) => claim.eventId)).toEqual([head.id]);
      expect((await store.claimDue(10, leaseAt(NOW))).claims).toEqual([]);
    });

  if (kind.interleaves === 'skip-locked')
    it("skips the rows another claim's open transaction locked, not those it only read, and takes them once it committed", async () => {
      await sixDue();
      const other = await harness.openClaim!(1, leaseAt(NOW + 10)); // reads 4 rows (the scan factor), locks the 1 it leases
      const meanwhile = await store.claimDue(10, leaseAt(NOW + 10));
      expect(users(meanwhile)).toEqual([2, 3, 4, 5, 6]);
      const committed = await other.commit();
      expect(users(committed)).toEqual([1]);
      expect(committed.exhausted).toBe(false); // it left rows it read for its holder's next claim
      expect((await store.claimDue(10, leaseAt(NOW + 10))).claims).toEqual([]);
    });

  if (kind.interleaves !== null)
    it("never skips a row of its own partitions while another holder's claim of the partition before holds its locking read", async () => {
      await harness.leases.take('a', [127], NOW, NOW + 10_000);
      await harness.leases.take('b', [128], NOW, NOW + 10_000);
      await enqueue([[event(127), 'due']]);
      await enqueue([[event(128), 'due']]); // the first row of its partition in the due index, right after a's range
      const other = await harness.openClaim!(10, leaseAt(NOW + 10), own('a', NOW + 10, [127]));
      const meanwhile = await store.claimDue(10, leaseAt(NOW + 10), undefined, own('b', NOW + 10, [128]));
      expect(users(meanwhile)).toEqual([128]);
      expect(users(await other.commit())).toEqual([127]);
    });

  if (kind.interleaves === 'skip-locked')
    it("never skips a row of its own partitions that another holder's claim, on a clock behind, passed but did not lease", async () => {
      await harness.leases.take('a', [127], NOW, NOW + 10_000);
      await harness.leases.take('b', [128], NOW, NOW + 10_000);
      await enqueue([[event(127), 'due']], leaseAt(NOW));
      await enqueue([[event(128), 'due']], leaseAt(NOW + 5)); // due after a's claim's time, before b's
      // a's claim leases all that is due at its time: a quiet outbox, where a status index looks as cheap as the key.
      const other = await harness.openClaim!(10, leaseAt(NOW), own('a', NOW, [127]));
      const meanwhile = await store.claimDue(10, leaseAt(NOW + 10), undefined, own('b', NOW + 10, [128]));
      expect(users(meanwhile)).toEqual([128]);
      expect(users(await other.commit())).toEqual([127]);
    });

  if (kind.interleaves === 'conditional-update')
    it("takes rows another claim read but has not updated yet; that claim's update then leases none and reports exhausted", async () => {
      await sixDue();
      const other = await harness.openClaim!(1, leaseAt(NOW + 10));
      const meanwhile = await store.claimDue(10, leaseAt(NOW + 10));
      expect(users(meanwhile)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(await other.commit()).toEqual({ claims: [], exhausted: true, excluded: [] });
    });

  it('a claim that picks rows but leases none (the partitions table gives them to another holder) reports exhausted', async () => {
    await harness.leases.take('b', [5], NOW, NOW + 10_000);
    await enqueue(Array.from({ length: 41 }, () => [event(5), 'due'] as [NewEvent, Placement]));
    // Memory names partition 5 (its lease lost, not yet noticed): the claim reads more rows than it may take, leases none.
    // Not exhausted, its instance would claim again at once and find the same, until memory catches up.
    expect(await store.claimDue(10, leaseAt(NOW), undefined, own('a', NOW, [5]))).toEqual({ claims: [], exhausted: true, excluded: [] });
    expect(users(await store.claimDue(10, leaseAt(NOW), undefined, own('b', NOW, [5])))).toHaveLength(10);
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

  it("numbers each stream's deliveries 1, 2, 3… in the order stored, rollbacks leaving no gap; again and recovered keep theirs", async () => {
    const [a, b] = [await harness.stream(1), await harness.stream(1)];
    const inA = () => ({ ...event(1), streamId: a });
    const [first, second, other, unnumbered] = [inA(), inA(), { ...event(1), streamId: b }, event(1)];
    const claims = await enqueue([
      [first, 'lease'],
      [other, 'lease'],
      [second, 'due'],
      [unnumbered, 'lease'],
    ]);
    expect(claims.map((claim) => [claim.eventId, claim.sequence ?? null])).toEqual(
      expect.arrayContaining([
        [first.id, 1],
        [other.id, 1],
        [unnumbered.id, null],
      ]),
    );
    const [rolledBack, third] = [inA(), inA()];
    await harness.within((tx) => store.enqueueWithin(tx, [rolledBack], () => 'due', leaseAt(NOW)), 'rollback');
    const thirdLease = leaseAt(NOW);
    await harness.within((tx) => store.enqueueWithin(tx, [third], () => 'lease', thirdLease), 'commit');
    const { claims: due } = await store.claimDue(10, leaseAt(NOW));
    const numbers = new Map(
      [...claims, ...due, ...(await store.leasedWith(thirdLease))].map((claim) => [claim.eventId, claim.sequence ?? null]),
    );
    expect([first, second, third].map((e) => numbers.get(e.id))).toEqual([1, 2, 3]);

    const firstClaim = claims.find((claim) => claim.eventId === first.id)!;
    const failed = { startedAt: NOW, result: result('http_error'), status: DeliveryStatus.FAILED, nextAttemptAt: null };
    expect(await store.recordAttempts([{ claim: firstClaim, record: failed }])).toEqual([true]);
    expect(await store.recoverFailed({ userId: 1, since: NOW - 1, until: NOW + 1_000 }, 10, () => 'due', leaseAt(NOW + 10))).toBe(1);
    const { claims: recovered } = await store.claimDue(10, leaseAt(NOW + 20));
    expect(recovered.map((claim) => [claim.eventId, claim.sequence])).toEqual([[first.id, 1]]);
    await store.recordAttempts([{ claim: recovered[0], record: { ...failed, startedAt: NOW + 20 } }]);
    expect(await store.enqueueAgain(first, 'lease', leaseAt(NOW + 30))).toMatchObject({ eventId: first.id, sequence: 1 });
  });

  it('in an ordered stream, claims take only its first PENDING delivery, the next once that one is final; a lease waits due', async () => {
    const ordered = await harness.stream(1, true);
    const inOrder = () => ({ ...event(1), streamId: ordered });
    const [head, next, last] = [inOrder(), inOrder(), inOrder()];
    const free = { ...event(1), streamId: await harness.stream(1) };
    // Asked to lease them at once, the store leaves the ordered ones due: the one before may not be final.
    const leased = await enqueue([
      [head, 'lease'],
      [next, 'lease'],
      [free, 'lease'],
      [last, 'due'],
    ]);
    expect(leased.map((claim) => claim.eventId)).toEqual([free.id]);
    await store.recordAttempts([{ claim: leased[0], record: attemptRecord(1, NOW, result('success'), NOW + 100) }]);
    expect(await store.anyDue(NOW)).toBe(true);
    const { claims } = await store.claimDue(10, leaseAt(NOW));
    expect(claims.map((claim) => [claim.eventId, claim.sequence, claim.ordered])).toEqual([[head.id, 1, true]]);

    // A retry keeps the head PENDING: the rest still wait, also once its retry is due and claimed again.
    const retry = attemptRecord(1, NOW, result('http_error'), NOW + 100);
    expect(retry.status).toBe(DeliveryStatus.PENDING);
    await store.recordAttempts([{ claim: claims[0], record: retry }]);
    expect(await store.anyDue(NOW + 1_000)).toBe(false);
    expect((await store.claimDue(10, leaseAt(NOW + 1_000))).claims).toEqual([]);
    const { claims: again } = await store.claimDue(10, leaseAt(retry.nextAttemptAt!));
    expect(again.map((claim) => claim.eventId)).toEqual([head.id]);

    // FAILED is final: the next one goes, then the last once that one is DELIVERED.
    const failed = { startedAt: retry.nextAttemptAt!, result: result('http_error'), status: DeliveryStatus.FAILED, nextAttemptAt: null };
    await store.recordAttempts([{ claim: again[0], record: failed }]);
    const at = retry.nextAttemptAt! + 1_000;
    const { claims: second } = await store.claimDue(10, leaseAt(at));
    expect(second.map((claim) => [claim.eventId, claim.sequence])).toEqual([[next.id, 2]]);
    await store.recordAttempts([{ claim: second[0], record: attemptRecord(1, at, result('success'), at + 100) }]);
    const { claims: third } = await store.claimDue(10, leaseAt(at + 1_000));
    expect(third.map((claim) => [claim.eventId, claim.sequence])).toEqual([[last.id, 3]]);
  });

  it('in an ordered stream, a redelivery waits behind what was queued before it; turning ordering off frees the rest', async () => {
    const streamId = await harness.stream(1, true);
    const inOrder = () => ({ ...event(1), streamId });
    const [old, queued] = [inOrder(), inOrder()];
    await enqueue([[old, 'due']]);
    const { claims } = await store.claimDue(10, leaseAt(NOW));
    await store.recordAttempts([{ claim: claims[0], record: attemptRecord(1, NOW, result('success'), NOW + 100) }]);
    await enqueue([[queued, 'due']], leaseAt(NOW + 200));
    const redelivered = await store.enqueueAgain(old, 'lease', leaseAt(NOW + 300));
    expect(redelivered).toEqual({ queued: expect.any(Number) as number });
    const { claims: turn } = await store.claimDue(10, leaseAt(NOW + 400));
    expect(turn.map((claim) => claim.eventId)).toEqual([queued.id]);
    await harness.setOrdered(streamId, false);
    const { claims: rest } = await store.claimDue(10, leaseAt(NOW + 500));
    expect(rest.map((claim) => [claim.eventId, claim.sequence, claim.ordered])).toEqual([[old.id, 1, false]]);
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

    expect(await harness.purge.purgeBatch(DeliveryStatus.DELIVERED, NOW + 5_000, 10)).toMatchObject({ deliveries: 1, events: 0 });
    expect(await store.recoverFailed(window, 100, () => 'due', leaseAt(NOW + 40))).toBe(0);
  });

  it('purges finished deliveries with their attempts, and their events once no delivery refers to them', async () => {
    const { event: gone } = await finished(1, DeliveryStatus.DELIVERED, NOW);
    const { event: kept } = await finished(1, DeliveryStatus.DELIVERED, NOW);
    await store.enqueueAgain(kept, 'due', leaseAt(NOW + 1));
    await finished(1, DeliveryStatus.FAILED, NOW);
    await finished(1, DeliveryStatus.DELIVERED, NOW + 10_000); // after the cut-off
    expect(await harness.purge.purgeBatch(DeliveryStatus.DELIVERED, NOW + 5_000, 1)).toMatchObject({
      matched: 1,
      deliveries: 1,
      attempts: 1,
    });
    const rest = await harness.purge.purgeBatch(DeliveryStatus.DELIVERED, NOW + 5_000, 10);
    expect(rest).toMatchObject({ matched: 1, deliveries: 1, attempts: 1 });
    expect(await harness.eventExists(gone.id)).toBe(false);
    expect(await harness.eventExists(kept.id)).toBe(true);
    expect(await harness.purge.purgeBatch(DeliveryStatus.DELIVERED, NOW + 5_000, 10)).toEqual({
      matched: 0,
      deliveries: 0,
      attempts: 0,
      events: 0,
    });
    expect(await harness.depth.queueDepth(NOW + 5_000, 100)).toEqual({ due: 1, inFlight: 0, failed: 1 });
  });

  it("writes every new delivery in its user's partition: enqueued, within a host transaction, again, recovered", async () => {
    const [first] = await enqueue([[event(300), 'lease']]);
    expect(partitionOf(300)).toBe(44);
    expect(await harness.delivery(first.id)).toMatchObject({ partition: 44 });
    const within = leaseAt(NOW);
    await harness.within((transaction) => store.enqueueWithin(transaction, [event(259)], () => 'lease', within), 'commit');
    const [leasedWithin] = await store.leasedWith(within);
    expect(await harness.delivery(leasedWithin.id)).toMatchObject({ partition: 3 });
    const failed = await finished(513, DeliveryStatus.FAILED);
    const again = (await store.enqueueAgain(failed.event, 'lease', leaseAt(NOW + 10))) as ClaimedDelivery;
    expect(await harness.delivery(again.id)).toMatchObject({ partition: 1 });
    const other = await finished(1023, DeliveryStatus.FAILED);
    const recovery = leaseAt(NOW + 20);
    expect(await store.recoverFailed({ userId: 1023, since: NOW - 1_000, until: NOW + 1_000 }, 10, () => 'lease', recovery)).toBe(1);
    const [recovered] = await store.leasedWith(recovery);
    expect(recovered.eventId).toBe(other.event.id);
    expect(await harness.delivery(recovered.id)).toMatchObject({ partition: 255 });
  });

  it('claims by owner take only the deliveries of partitions it names and whose lease it holds, as the partitions table says; anyDue agrees', async () => {
    const { leases } = harness;
    expect(await leases.take('a', [1, 2], NOW, NOW + 10_000)).toEqual([
      { partition: 1, epoch: 1 },
      { partition: 2, epoch: 1 },
    ]);
    expect(await leases.take('b', [3], NOW, NOW + 10_000)).toEqual([{ partition: 3, epoch: 1 }]);
    for (const userId of [1, 2, 3, 257, 4]) await enqueue([[event(userId), 'due']]);
    const usersClaimed = async (owned: Ownership, now = NOW) => {
      const { claims } = await store.claimDue(10, leaseAt(now), undefined, owned);
      return claims.map((claim) => claim.userId).sort((x, y) => x - y);
    };
    expect(await store.anyDue(NOW, own('nobody'))).toBe(false);
    expect(await store.anyDue(NOW, own('a', NOW, []))).toBe(false);
    expect(await store.anyDue(NOW, own('a'))).toBe(true);
    expect(await usersClaimed(own('nobody'))).toEqual([]);
    expect(await usersClaimed(own('a', NOW, [2, 3]))).toEqual([2]); // what it names and the table gives it
    expect(await usersClaimed(own('a'))).toEqual([1, 257]);
    expect(await store.anyDue(NOW, own('a'))).toBe(false);
    expect(await store.anyDue(NOW, own('b'))).toBe(true);
    await leases.release('b', [3]); // given back: its deliveries are no longer b's at once
    expect(await store.anyDue(NOW, own('b'))).toBe(false);
    expect(await usersClaimed(own('b'))).toEqual([]);
    expect(await usersClaimed('all')).toEqual([3, 4]);
  });

  it("a holder whose lease does not run past the claim's bound claims nothing, whatever it believes; the next taker then does", async () => {
    const { leases } = harness;
    const [held] = await leases.take('a', [5], NOW, NOW + 10_000);
    await enqueue([[event(5), 'due']]);
    await enqueue([[event(5), 'due']]);
    expect(await store.anyDue(NOW, own('a', NOW + 9_999))).toBe(true); // the lease runs past then
    const { claims: last } = await store.claimDue(1, leaseAt(NOW), undefined, own('a', NOW + 9_999));
    expect(last.map((claim) => claim.userId)).toEqual([5]);
    expect(await store.anyDue(NOW, own('a', NOW + 10_000))).toBe(false);
    expect(await store.claimDue(10, leaseAt(NOW), undefined, own('a', NOW + 10_000))).toEqual({
      claims: [],
      exhausted: true,
      excluded: [],
    });
    expect(await store.anyDue(NOW + 10_001)).toBe(true); // the delivery is there, only not a's
    expect(await leases.take('b', [5], NOW + 10_001, NOW + 20_000)).toEqual([{ partition: 5, epoch: held.epoch + 1 }]);
    expect(await leases.renew('a', [held], NOW + 10_001, NOW + 20_000)).toEqual([]);
    expect(await store.claimDue(10, leaseAt(NOW + 10_002), undefined, own('a', NOW + 10_002))).toEqual({
      claims: [],
      exhausted: true,
      excluded: [],
    });
    const { claims } = await store.claimDue(10, leaseAt(NOW + 10_002), undefined, own('b', NOW + 10_002));
    expect(claims.map((claim) => claim.userId)).toEqual([5]);
    expect(claims[0].id).not.toBe(last[0].id);
  });

  it('queueDepth counts due, leased and FAILED deliveries, each capped', async () => {
    for (let i = 0; i < 3; i++) await enqueue([[event(1), 'due']]);
    await enqueue([[event(1), 'lease']], leaseAt(NOW, 1_000));
    await enqueue([[event(2), parkedUntil(NOW + 60_000)]]);
    await finished(3, DeliveryStatus.FAILED);
    expect(await harness.depth.queueDepth(NOW, 100)).toEqual({ due: 3, inFlight: 1, failed: 1 });
    expect(await harness.depth.queueDepth(NOW, 2)).toEqual({ due: 2, inFlight: 1, failed: 1 });
    expect(await harness.depth.queueDepth(NOW + 1_001, 100)).toEqual({ due: 4, inFlight: 0, failed: 1 }); // the lease expired
  });
});
