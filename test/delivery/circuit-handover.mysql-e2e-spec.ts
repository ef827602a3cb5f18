import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { type AddressInfo, createServer, type Server } from 'node:net';
import {
  attachNotificationsTestKit,
  notificationsTestOptions,
  type NotificationsTestKit,
  startTestReceiver,
  TestClock,
  type TestReceiver,
} from '@funding/notification-webhooks/testing';
import { DEFAULT_CIRCUIT_BREAKER, DELIVERY_SETTINGS, type DeliverySettings } from '../../src/notifications/delivery/delivery-settings';
import { partitionLeaseMs, PARTITION_RENEW_MS, PartitionOwnership } from '../../src/notifications/delivery/partitions/partition-ownership';
import { PARTITION_COUNT } from '../../src/notifications/delivery/partitions/partitions';
import { NotificationChannel } from '../../src/notifications/catalog/event-catalog';
import { PreferencesService } from '../../src/notifications/preferences/preferences.service';
import { describeEachServerDatabase } from '../support/each-database';
import { startTestAppOn, type TestApp } from '../support/test-app';
import type { TestDatabase } from '../support/test-databases';

const { failuresToOpen, coolDownMs } = DEFAULT_CIRCUIT_BREAKER;

/**
 * An open circuit moves with its user's partition. Two instances on one MySQL/MariaDB database; the owner of a
 * user's partition opens the circuit of the user's dead endpoint, then goes away (a rolling restart, or a crash whose
 * leases run out); the other instance takes the partition over and must skip the endpoint until the cool-down the first
 * one started ends, then send one probe, not count five fresh failures against it.
 */
describeEachServerDatabase('an open circuit handed over with its partition on $name', (kind) => {
  let database: TestDatabase;
  let receiver: TestReceiver;
  let dead: Server;
  let connections = 0;
  const encryptionKey = { id: 'shared', key: randomBytes(32) };

  beforeAll(async () => {
    database = await kind.create();
    receiver = await startTestReceiver();
    // A host that takes connections and drops them at once: every attempt to it fails to connect.
    dead = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    dead.listen(0, '127.0.0.1');
    await once(dead, 'listening');
  });

  afterAll(async () => {
    dead.close();
    await receiver.close();
    await database.drop();
  });

  /** Two instances on the database, their partitions split between them, and `userId`'s webhook on the dead host. */
  const startPair = async (userId: number) => {
    const clock = new TestClock();
    const options = { ...notificationsTestOptions({ receiver, clock }), encryptionKeys: [encryptionKey] };
    const shared = { ...database, drop: async () => undefined };
    const instances = [await startTestAppOn(shared, options), await startTestAppOn(shared, options)];
    const kits = instances.map((instance) => attachNotificationsTestKit(instance.app, { receiver, clock }));
    const ownership = (instance: TestApp) => instance.app.get(PartitionOwnership);
    const rounds = async (alive: readonly TestApp[]) => {
      for (const instance of alive) await ownership(instance).cycle();
    };
    // The first to look takes all 256, alone alive; after its minimum hold it hands the other its share.
    await rounds(instances);
    clock.advance(10_000);
    await rounds(instances);
    await rounds(instances);
    expect(instances.map((instance) => ownership(instance).count)).not.toContain(0);
    await instances[0].app.get(PreferencesService).upsert(userId, {
      type: 'LOAN_EXECUTED' as never,
      channel: NotificationChannel.WEBHOOK,
      enabled: true,
      webhookUrl: `https://127.0.0.1:${(dead.address() as AddressInfo).port}/dead`,
    });
    const owner = instances.findIndex((instance) => ownership(instance).covers(userId, clock.now()));
    expect(owner).toBeGreaterThanOrEqual(0);
    const publish = (kit: NotificationsTestKit, count: number, title: string) =>
      kit.publisher.publishMany(
        Array.from({ length: count }, (_, i) => ({
          userId,
          type: 'LOAN_EXECUTED' as never,
          severity: 'INFO' as never,
          title: `${title} ${i}`,
          body: 'x',
        })),
      );
    /** The clock moves by renewal intervals, the instances still `alive` renewing after each step. */
    const advance = async (ms: number, alive: readonly TestApp[]) => {
      for (let left = ms; left > 0; left -= PARTITION_RENEW_MS) {
        clock.advance(Math.min(left, PARTITION_RENEW_MS));
        await rounds(alive);
      }
    };
    return { clock, instances, kits, owner, other: 1 - owner, ownership, publish, advance };
  };

  const outcomes = async (instance: TestApp, userId: number) => {
    const rows: { outcome: string; attempts: number | string }[] = await instance.dataSource.query(
      'SELECT a.outcome, COUNT(*) AS attempts FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id ' +
        'WHERE d.user_id = ? GROUP BY a.outcome',
      [userId],
    );
    return Object.fromEntries(rows.map((row) => [row.outcome, Number(row.attempts)]));
  };

  /** Runs `test` on a pair whose owner of `userId`'s partition opened the circuit of the user's dead endpoint. */
  const withOpenCircuit = async (userId: number, test: (pair: Awaited<ReturnType<typeof startPair>>) => Promise<void>) => {
    const pair = await startPair(userId);
    try {
      connections = 0;
      await pair.publish(pair.kits[pair.owner], failuresToOpen, 'opens');
      await pair.kits[pair.owner].runScheduler();
      expect(connections).toBe(failuresToOpen);
      await test(pair);
    } finally {
      for (const instance of pair.instances) await instance.close().catch(() => undefined);
    }
  };

  it('skips the dead endpoint on the new owner until the cool-down ends when its owner shuts down (a rolling restart)', () =>
    withOpenCircuit(21, async (pair) => {
      const { instances, kits, owner, other } = pair;
      const userId = 21;
      await instances[owner].close();
      await pair.ownership(instances[other]).cycle(); // takes the partitions given back, at its next round
      expect(pair.ownership(instances[other]).count).toBe(PARTITION_COUNT);

      await pair.publish(kits[other], 3, 'after');
      await kits[other].runScheduler();
      expect(connections).toBe(failuresToOpen); // inherited open: nothing sent
      expect(await outcomes(instances[other], userId)).toEqual({ connect_error: failuresToOpen, circuit_open: 3 });

      await pair.advance(coolDownMs, [instances[other]]);
      await pair.publish(kits[other], 3, 'cooled');
      await kits[other].runScheduler();
      expect(connections).toBe(failuresToOpen + 1); // one probe, not three attempts
      expect(await outcomes(instances[other], userId)).toEqual({ connect_error: failuresToOpen + 1, circuit_open: 5 });
    }));

  it('lets the new owner probe once, not start counting afresh, when the owner crashed and its leases ran out', () =>
    withOpenCircuit(22, async (pair) => {
      const { instances, kits, owner, other } = pair;
      const userId = 22;
      // A crash: no more renewals, nothing given back; the survivor takes the partitions once their leases ended, by
      // when the cool-down the crashed owner started is over (its lease outlasts it).
      await pair.ownership(instances[owner]).stop(false);
      const settings = instances[owner].app.get<DeliverySettings>(DELIVERY_SETTINGS);
      const takeOver = partitionLeaseMs(settings) + PARTITION_RENEW_MS;
      expect(takeOver).toBeGreaterThanOrEqual(coolDownMs);
      await pair.advance(takeOver, [instances[other]]);
      expect(pair.ownership(instances[other]).count).toBe(PARTITION_COUNT);

      await pair.publish(kits[other], 3, 'after');
      await kits[other].runScheduler();
      expect(connections).toBe(failuresToOpen + 1); // half-open: one probe; afresh, all three would be sent
      expect(await outcomes(instances[other], userId)).toEqual({ connect_error: failuresToOpen + 1, circuit_open: 2 });
    }));
});
