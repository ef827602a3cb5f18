import { DataSource } from 'typeorm';
import { databaseOptions } from '../../src/service/database/database-options';
import { serialTransactionsOf } from '../../src/notifications/common/database/serial-transactions';
import { PartitionLeaseRepository } from '../../src/notifications/delivery/partitions/partition-lease.repository';
import type { PartitionLeases } from '../../src/notifications/delivery/partitions/partition-leases';
import { PARTITION_COUNT } from '../../src/notifications/delivery/partitions/partitions';
import { InMemoryPartitionLeases } from '../simulation/in-memory-partition-leases';
import { describeEachServerDatabase } from '../support/each-database';
import { TEST_DATABASE_KINDS, type TestDatabase } from '../support/test-databases';

/** A partition's row as a case reads it back, whichever store holds it. */
interface PartitionView {
  holder: string | null;
  leaseUntil: number;
  epoch: number;
}

interface Harness {
  readonly leases: PartitionLeases;
  partition(partition: number): Promise<PartitionView>;
  close(): Promise<void>;
}

const memory = {
  name: 'in-memory',
  open: async (): Promise<Harness> => {
    const leases = new InMemoryPartitionLeases();
    return { leases, partition: async (partition) => ({ ...leases.partitions.get(partition)! }), close: async () => undefined };
  },
};

const sql = TEST_DATABASE_KINDS.map((kind) => ({
  name: kind.name,
  async open(): Promise<Harness> {
    const database: TestDatabase = await kind.create();
    const dataSource = await new DataSource(databaseOptions(database.config)).initialize();
    serialTransactionsOf(dataSource);
    return {
      leases: new PartitionLeaseRepository(dataSource),
      async partition(partition) {
        const [row] = await dataSource.query<{ holder: string | null; lease_until: number | string; epoch: number | string }[]>(
          'SELECT holder, lease_until, epoch FROM webhook_partitions WHERE user_partition = ?',
          [partition],
        );
        return { holder: row.holder, leaseUntil: Number(row.lease_until), epoch: Number(row.epoch) };
      },
      async close() {
        await dataSource.destroy();
        await database.drop();
      },
    };
  },
}));

const NOW = 1_800_000_000_000;
const LEASE_MS = 10_000;
const ALL = Array.from({ length: PARTITION_COUNT }, (_, partition) => partition);
const FREE: PartitionView = { holder: null, leaseUntil: 0, epoch: 0 };

describe.each([memory, ...sql])('PartitionLeases conformance: $name', (kind) => {
  let harness: Harness;
  let leases: PartitionLeases;

  beforeEach(async () => {
    harness = await kind.open();
    leases = harness.leases;
  });
  afterEach(async () => {
    await harness.close();
  });

  it('starts with every partition free, never taken', async () => {
    for (const partition of [0, 1, 128, PARTITION_COUNT - 1]) expect(await harness.partition(partition)).toEqual(FREE);
    expect(await leases.take('a', ALL, NOW, NOW + LEASE_MS)).toEqual(ALL.map((partition) => ({ partition, epoch: 1 })));
  });

  it('heartbeat answers the holders alive at the time, itself included, and forgets those gone for an hour', async () => {
    const names = async (...beat: Parameters<PartitionLeases['heartbeat']>) =>
      (await leases.heartbeat(...beat)).map((alive) => alive.holder);
    expect(await names('b', NOW, NOW + LEASE_MS, null)).toEqual(['b']);
    expect(await names('a', NOW + 1_000, NOW + 1_000 + LEASE_MS, null)).toEqual(['a', 'b']);
    expect(await names('c', NOW + LEASE_MS, NOW + 2 * LEASE_MS, null)).toEqual(['a', 'c']); // b's time has come
    expect(await names('b', NOW + LEASE_MS + 1, NOW + 3 * LEASE_MS, null)).toEqual(['a', 'b', 'c']); // back again
    await leases.heartbeat('a', NOW + 2 * LEASE_MS, NOW + 2 * LEASE_MS, null); // alive until now: not counted
    expect(await names('c', NOW + 2 * LEASE_MS, NOW + 4 * LEASE_MS, null)).toEqual(['b', 'c']);
    // An hour later, a's and b's rows go: b's heartbeat long after brings only b back.
    const later = NOW + 4 * LEASE_MS + 60 * 60_000 + 1;
    expect(await names('d', later, later + LEASE_MS, null)).toEqual(['d']);
    expect(await names('b', later, later + LEASE_MS, null)).toEqual(['b', 'd']);
  });

  it('heartbeat tells each live holder until when it said it is alive, and when a receiver last answered it', async () => {
    await leases.heartbeat('a', NOW, NOW + LEASE_MS, NOW - 5_000);
    expect(await leases.heartbeat('b', NOW + 1, NOW + 1 + LEASE_MS, null)).toEqual([
      { holder: 'a', aliveUntil: NOW + LEASE_MS, answeredAt: NOW - 5_000 },
      { holder: 'b', aliveUntil: NOW + 1 + LEASE_MS, answeredAt: null },
    ]);
    await leases.heartbeat('a', NOW + 2, NOW + 2 + LEASE_MS, NOW + 1);
    expect(await leases.heartbeat('b', NOW + 3, NOW + 3 + LEASE_MS, NOW + 3)).toEqual([
      { holder: 'a', aliveUntil: NOW + 2 + LEASE_MS, answeredAt: NOW + 1 },
      { holder: 'b', aliveUntil: NOW + 3 + LEASE_MS, answeredAt: NOW + 3 },
    ]);
  });

  it('take takes only free or expired partitions, each with a new epoch', async () => {
    expect(await leases.take('a', [1, 2, 3], NOW, NOW + LEASE_MS)).toEqual([
      { partition: 1, epoch: 1 },
      { partition: 2, epoch: 1 },
      { partition: 3, epoch: 1 },
    ]);
    expect(await leases.take('b', [2, 3, 4], NOW + 1, NOW + 1 + LEASE_MS)).toEqual([{ partition: 4, epoch: 1 }]);
    // At the lease's end it still runs; just after, it is free for anyone, its old holder included.
    expect(await leases.take('b', [1], NOW + LEASE_MS, NOW + 2 * LEASE_MS)).toEqual([]);
    expect(await leases.take('b', [1, 2], NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS)).toEqual([
      { partition: 1, epoch: 2 },
      { partition: 2, epoch: 2 },
    ]);
    expect(await leases.take('a', [3], NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS)).toEqual([{ partition: 3, epoch: 2 }]);
    expect(await harness.partition(1)).toEqual({ holder: 'b', leaseUntil: NOW + 2 * LEASE_MS, epoch: 2 });
    expect(await harness.partition(3)).toEqual({ holder: 'a', leaseUntil: NOW + 2 * LEASE_MS, epoch: 2 });
    expect(await harness.partition(4)).toEqual({ holder: 'b', leaseUntil: NOW + 1 + LEASE_MS, epoch: 1 });
    expect(await leases.take('a', [], NOW, NOW + LEASE_MS)).toEqual([]);
  });

  it('take takes again what the holder holds already (a take whose answer was lost), with a new epoch, and nothing of another', async () => {
    expect(await leases.take('a', [1, 2], NOW, NOW + LEASE_MS)).toHaveLength(2); // committed; say its answer was lost
    expect(await leases.take('b', [2], NOW + 1, NOW + 1 + LEASE_MS)).toEqual([]);
    expect(await leases.take('a', [1, 2, 3], NOW + 1, NOW + 1 + LEASE_MS)).toEqual([
      { partition: 1, epoch: 2 },
      { partition: 2, epoch: 2 },
      { partition: 3, epoch: 1 },
    ]);
    expect(await harness.partition(2)).toEqual({ holder: 'a', leaseUntil: NOW + 1 + LEASE_MS, epoch: 2 });
  });

  it('renew extends only the leases still held, same epoch, running at the time', async () => {
    const held = await leases.take('a', [1, 2, 3], NOW, NOW + LEASE_MS);
    expect(await leases.renew('a', held, NOW + LEASE_MS, NOW + 2 * LEASE_MS)).toEqual(held); // running until then: renewed
    expect(await harness.partition(2)).toEqual({ holder: 'a', leaseUntil: NOW + 2 * LEASE_MS, epoch: 1 });
    // Another holder's name, an epoch never taken, a lease that ended: none renewed, none changed.
    expect(await leases.renew('b', held, NOW + LEASE_MS, NOW + 3 * LEASE_MS)).toEqual([]);
    expect(await leases.renew('a', [{ partition: 1, epoch: 7 }], NOW + LEASE_MS, NOW + 3 * LEASE_MS)).toEqual([]);
    expect(await leases.renew('a', held, NOW + 2 * LEASE_MS + 1, NOW + 3 * LEASE_MS)).toEqual([]);
    for (const { partition } of held)
      expect(await harness.partition(partition)).toEqual({ holder: 'a', leaseUntil: NOW + 2 * LEASE_MS, epoch: 1 });
    expect(await leases.renew('a', [], NOW, NOW + LEASE_MS)).toEqual([]);
  });

  it('a renewal after another took the partition (its lease had ended) renews nothing, not even a lease taken again by itself', async () => {
    const [first, second] = await leases.take('a', [5, 6], NOW, NOW + LEASE_MS);
    expect(await leases.take('b', [5], NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS)).toEqual([{ partition: 5, epoch: 2 }]);
    expect(await leases.take('a', [6], NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS)).toEqual([{ partition: 6, epoch: 2 }]);
    // a's late renewal (its clock behind) names the first epochs: b's lease and a's own newer one stay as they are.
    expect(await leases.renew('a', [first, second], NOW + LEASE_MS - 1, NOW + 5 * LEASE_MS)).toEqual([]);
    expect(await harness.partition(5)).toEqual({ holder: 'b', leaseUntil: NOW + 2 * LEASE_MS, epoch: 2 });
    expect(await harness.partition(6)).toEqual({ holder: 'a', leaseUntil: NOW + 2 * LEASE_MS, epoch: 2 });
  });

  it('release frees at once (for any clock) the partitions the holder holds, and only those', async () => {
    await leases.take('a', [1, 2], NOW, NOW + LEASE_MS);
    await leases.take('b', [3], NOW, NOW + LEASE_MS);
    await leases.release('a', [2, 3]);
    expect(await harness.partition(2)).toEqual({ holder: null, leaseUntil: 0, epoch: 1 });
    expect(await harness.partition(3)).toEqual({ holder: 'b', leaseUntil: NOW + LEASE_MS, epoch: 1 });
    // 1 is a's, 2 is free (for a clock behind too), 3 is b's own: taken again.
    expect(await leases.take('b', [1, 2, 3], NOW - 5_000, NOW + 2 * LEASE_MS)).toEqual([
      { partition: 2, epoch: 2 },
      { partition: 3, epoch: 2 },
    ]);
    expect(await leases.renew('a', [{ partition: 2, epoch: 1 }], NOW, NOW + 2 * LEASE_MS)).toEqual([]);
    await leases.release('a', []);
  });

  it('leave frees every partition of the holder and drops it from the holders alive', async () => {
    await leases.heartbeat('a', NOW, NOW + LEASE_MS, null);
    await leases.heartbeat('b', NOW, NOW + LEASE_MS, null);
    await leases.take('a', [1, 2, 200], NOW, NOW + LEASE_MS);
    await leases.take('b', [3], NOW, NOW + LEASE_MS);
    await leases.leave('a');
    for (const partition of [1, 2, 200]) expect(await harness.partition(partition)).toEqual({ holder: null, leaseUntil: 0, epoch: 1 });
    expect(await harness.partition(3)).toEqual({ holder: 'b', leaseUntil: NOW + LEASE_MS, epoch: 1 });
    expect(await leases.heartbeat('b', NOW + 1, NOW + LEASE_MS, null)).toEqual([
      { holder: 'b', aliveUntil: NOW + LEASE_MS, answeredAt: null },
    ]);
    expect(await leases.take('b', [1, 2, 3, 200], NOW + 1, NOW + 1 + LEASE_MS)).toEqual([
      { partition: 1, epoch: 2 },
      { partition: 2, epoch: 2 },
      { partition: 3, epoch: 2 },
      { partition: 200, epoch: 2 },
    ]);
  });

  it("keeps each endpoint's circuit for the next owner of its user's partition: replaced as it changes, forgotten when closed or stale", async () => {
    const state = (failures: number, openUntil: number | null) => ({ failures, openUntil, coolDownMs: 30_000, lastFailureAt: NOW });
    const circuit = (userId: number, host: string, kept: ReturnType<typeof state> | null, forgetAfter = NOW + 60_000) => ({
      userId,
      host,
      state: kept,
      forgetAfter,
    });
    const [of3, of4] = await leases.take('a', [3, 4], NOW, NOW + LEASE_MS);
    const keep = (kept: ReturnType<typeof circuit>) => leases.keepCircuit(kept, 'a', kept.userId % 256 === 3 ? of3 : of4);
    await keep(circuit(3, 'a.example:8443', state(5, NOW + 30_000)));
    await keep(circuit(3, 'b.example', state(2, null)));
    await keep(circuit(259, 'a.example:8443', state(5, NOW + 30_000), NOW + 1)); // user 259: partition 3 too
    await keep(circuit(4, 'a.example:8443', state(5, NOW + 30_000)));
    await keep(circuit(3, 'b.example', state(6, NOW + 60_000))); // it opened since: replaced
    const sorted = (kept: Awaited<ReturnType<PartitionLeases['circuitsOf']>>) =>
      [...kept].sort((x, y) => x.userId - y.userId || x.host.localeCompare(y.host));
    expect(sorted(await leases.circuitsOf([3], NOW))).toEqual([
      circuit(3, 'a.example:8443', state(5, NOW + 30_000)),
      circuit(3, 'b.example', state(6, NOW + 60_000)),
      circuit(259, 'a.example:8443', state(5, NOW + 30_000), NOW + 1),
    ]);
    expect(sorted(await leases.circuitsOf([3, 4], NOW + 1))).toEqual([
      circuit(3, 'a.example:8443', state(5, NOW + 30_000)),
      circuit(3, 'b.example', state(6, NOW + 60_000)),
      circuit(4, 'a.example:8443', state(5, NOW + 30_000)),
    ]);
    expect(await leases.circuitsOf([3], NOW)).toHaveLength(2); // the stale one was forgotten, not only left out
    await keep(circuit(3, 'a.example:8443', null)); // closed
    expect(await leases.circuitsOf([3], NOW)).toEqual([circuit(3, 'b.example', state(6, NOW + 60_000))]);
    expect(await leases.circuitsOf([5], NOW)).toEqual([]);
  });

  it("writes a circuit only while the writer holds the partition's lease it names: never over the next owner's", async () => {
    const open = {
      userId: 3,
      host: 'a.example',
      state: { failures: 3, openUntil: NOW + 30_000, coolDownMs: 30_000, lastFailureAt: NOW },
      forgetAfter: NOW + 60_000,
    };
    const [ofA] = await leases.take('a', [3], NOW, NOW + LEASE_MS);
    const [ofB] = await leases.take('b', [3], NOW + LEASE_MS + 1, NOW + 2 * LEASE_MS); // a's lease ended
    await leases.keepCircuit(open, 'b', ofB);
    await leases.keepCircuit({ ...open, state: { ...open.state, failures: 1, openUntil: null } }, 'a', ofA); // a's late write
    await leases.keepCircuit({ ...open, state: null }, 'a', ofA); // and a's late close
    await leases.keepCircuit({ ...open, host: 'b.example' }, 'a', ofA);
    await leases.keepCircuit(open, 'b', { partition: 3, epoch: ofB.epoch - 1 }); // a lease of b's own, taken again since
    expect(await leases.circuitsOf([3], NOW)).toEqual([open]);
    await leases.release('b', [3]);
    await leases.keepCircuit({ ...open, state: null }, 'b', ofB); // given back: b no longer writes either
    expect(await leases.circuitsOf([3], NOW)).toEqual([open]);
  });
});

// Real concurrency: two instances, each with its own DataSource (its own pool), on one MySQL/MariaDB database.
describeEachServerDatabase('partition takes racing on $name', (kind) => {
  let database: TestDatabase;
  let dataSources: DataSource[];

  beforeEach(async () => {
    database = await kind.create();
    dataSources = [];
    for (let i = 0; i < 2; i++) dataSources.push(await new DataSource(databaseOptions(database.config)).initialize());
  });
  afterEach(async () => {
    for (const dataSource of dataSources) await dataSource.destroy();
    await database.drop();
  });

  it('never gives one partition to two holders taking at once; every free one goes to one of them', async () => {
    const [a, b] = dataSources.map((dataSource) => new PartitionLeaseRepository(dataSource));
    for (let round = 0; round < 10; round++) {
      const now = NOW + round * 2 * LEASE_MS; // every lease of the round before has ended
      // Each takes every partition, in small overlapping batches at once, in opposite orders.
      const batches = (order: number[]) => Array.from({ length: 16 }, (_, i) => order.slice(i * 16, i * 16 + 16));
      const takes = await Promise.all([
        ...batches(ALL).map((batch) => a.take('a', batch, now, now + LEASE_MS)),
        ...batches([...ALL].reverse()).map((batch) => b.take('b', batch, now, now + LEASE_MS)),
      ]);
      const takenBy = (from: number, to: number) => takes.slice(from, to).flatMap((taken) => taken.map((lease) => lease.partition));
      const [byA, byB] = [takenBy(0, 16), takenBy(16, 32)];
      expect(byA.filter((partition) => byB.includes(partition))).toEqual([]);
      expect([...byA, ...byB].sort((x, y) => x - y)).toEqual(ALL);
      const rows = await dataSources[0].query<{ user_partition: number; holder: string; epoch: number | string }[]>(
        'SELECT user_partition, holder, epoch FROM webhook_partitions ORDER BY user_partition',
      );
      expect(rows.filter((row) => row.holder === 'a').map((row) => Number(row.user_partition))).toEqual([...byA].sort((x, y) => x - y));
      expect(rows.filter((row) => row.holder === 'b').map((row) => Number(row.user_partition))).toEqual([...byB].sort((x, y) => x - y));
      expect(new Set(rows.map((row) => Number(row.epoch)))).toEqual(new Set([round + 1]));
    }
  });
});
