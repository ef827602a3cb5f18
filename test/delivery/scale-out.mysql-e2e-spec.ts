import { randomBytes, randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { type AddressInfo, createServer } from 'node:net';
import { DeliveryOutboxRepository } from '../../src/notifications/delivery/engine/delivery-outbox.repository';
import {
  attachNotificationsTestKit,
  notificationsTestOptions,
  type NotificationsTestKit,
  startTestReceiver,
  TestClock,
  type TestReceiver,
} from '@funding/notification-webhooks/testing';
import { OutboxEngine } from '../../src/notifications/delivery/engine/outbox-engine.service';
import {
  PARTITION_MIN_HOLD_MS,
  PARTITION_RENEW_MS,
  PartitionOwnership,
} from '../../src/notifications/delivery/partitions/partition-ownership';
import { PARTITION_COUNT, partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import { NotificationChannel } from '../../src/notifications/catalog/event-catalog';
import { PreferencesService } from '../../src/notifications/preferences/preferences.service';
import { describeEachServerDatabase } from '../support/each-database';
import { startTestAppOn, type TestApp } from '../support/test-app';
import type { TestDatabase } from '../support/test-databases';
import { DELIVERIES } from '../support/settings-api';

const EVENTS = 600;
/** Users whose partitions the three instances share (users 0..29 spread over the 256 partitions, so over every instance). */
const USERS = Array.from({ length: 30 }, (_, i) => 100 + i);

// Several instances on one MySQL/MariaDB database, each with its own connection pool, as in production.
describeEachServerDatabase('three instances sharing $name', (kind) => {
  let database: TestDatabase;
  let receiver: TestReceiver;
  let clock: TestClock;
  let instances: TestApp[];
  let kits: NotificationsTestKit[];
  const encryptionKey = { id: 'shared', key: randomBytes(32) };

  beforeAll(async () => {
    database = await kind.create();
    receiver = await startTestReceiver();
    clock = new TestClock();
    const options = { ...notificationsTestOptions({ receiver, clock }), encryptionKeys: [encryptionKey], delivery: { batchSize: 50 } };
    instances = [];
    for (let i = 0; i < 3; i++)
      instances.push(await startTestAppOn(i === 0 ? database : { ...database, drop: async () => undefined }, options));
    kits = instances.map((instance) => attachNotificationsTestKit(instance.app, { receiver, clock }));
    await balancePartitions();
    for (const userId of USERS) await kits[0].enableWebhook(userId, 'LOAN_EXECUTED', '/scale');
  });

  /**
   * Spreads the partitions over the three instances, as their renewals every 5 s would (here each runs its rounds at
   * once): after a start, or after the test clock jumped past every lease, the first to look takes them all, alone
   * alive then; once its minimum hold is over it hands the others their share.
   */
  const balancePartitions = async () => {
    const round = async () => {
      for (const instance of instances) await ownershipOf(instance).cycle();
    };
    await round();
    clock.advance(PARTITION_MIN_HOLD_MS);
    await round();
    await round();
    expect(instances.map((instance) => ownershipOf(instance).count).reduce((sum, n) => sum + n, 0)).toBe(PARTITION_COUNT);
    expect(instances.every((instance) => ownershipOf(instance).count > 0)).toBe(true);
  };
  /**
   * The test clock moves as real time would for the instances: by steps of one renewal interval, each instance renewing
   * its partitions after each, so that none of their leases ends and none moves (a take would claim what it found due).
   */
  const advance = async (ms: number) => {
    for (let left = ms; left > 0; left -= PARTITION_RENEW_MS) {
      clock.advance(Math.min(left, PARTITION_RENEW_MS));
      for (const instance of instances) await ownershipOf(instance).cycle();
    }
  };
  const ownershipOf = (instance: TestApp) => instance.app.get(PartitionOwnership);
  /** The instance whose partitions hold the user's. */
  const ownerOf = (userId: number) => instances.findIndex((instance) => ownershipOf(instance).covers(userId, clock.now()));
  /**
   * Every instance's scheduler run at once; how many deliveries each attempted. A claim locks only the rows it leases,
   * all of its own partitions: another owner's claim running meanwhile finds every row of its own.
   */
  const runSchedulers = () => Promise.all(kits.map((kit) => kit.runScheduler()));

  afterAll(async () => {
    for (const instance of instances.slice(1)) await instance.close();
    await instances[0].close();
    await receiver.close();
  });

  const countsByEvent = () => {
    const counts = new Map<string, number>();
    for (const request of receiver.requests) {
      const id = request.headers['x-service-event-id'] as string;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  };

  it('attempts every due delivery exactly once when all instances tick at the same time, each those of its partitions', async () => {
    receiver.respondWith({ status: 500 });
    const events = Array.from({ length: EVENTS }, (_, i) => ({
      userId: USERS[i % USERS.length],
      type: 'LOAN_EXECUTED' as never,
      severity: 'INFO' as never,
      title: `Loan ${i}`,
      body: 'filled',
    }));
    const { queuedDeliveries } = await kits[0].publisher.publishMany(events);
    expect(queuedDeliveries).toBe(EVENTS);
    await runSchedulers();
    expect(receiver.requests).toHaveLength(EVENTS);

    receiver.respondWith({ status: 204 });
    await advance(60_000);
    const attempted = await runSchedulers();

    const expected = [0, 1, 2].map((index) => events.filter((event) => ownerOf(event.userId) === index).length);
    expect(attempted).toEqual(expected);
    expect(expected.filter((n) => n > 0).length).toBeGreaterThan(1);
    const counts = countsByEvent();
    expect(counts.size).toBe(EVENTS);
    expect([...counts.values()].every((n) => n === 2)).toBe(true);
  });

  it("lets the partition's owner deliver what a crashed instance had leased, once the lease expires", async () => {
    const userId = USERS[0];
    receiver.clear();
    receiver.respondWith({ status: 500 });
    await kits[ownerOf(userId)].publisher.publishMany([
      { userId, type: 'LOAN_EXECUTED' as never, severity: 'INFO' as never, title: 'crash', body: 'x' },
    ]);
    await kits[ownerOf(userId)].settle();
    receiver.respondWith({ status: 204 });
    await advance(60_000);
    const owner = ownerOf(userId);
    const crashed = (owner + 1) % 3;

    // An instance of before partitions (or one that lost them unseen) leases the delivery, then crashes.
    const { claims: leased } = await instances[crashed].app
      .get(DeliveryOutboxRepository)
      .claimDue(100, instances[crashed].app.get(OutboxEngine).lease());
    expect(leased).toHaveLength(1);
    expect(await runSchedulers()).toEqual([0, 0, 0]);

    await advance(60_001); // past the crashed instance's lease
    const next = ownerOf(userId);
    expect(await runSchedulers()).toEqual([0, 1, 2].map((index) => (index === next ? 1 : 0)));
    expect(receiver.requests).toHaveLength(2);
  });

  it('keeps an endpoint at its cap of requests in flight (4), whatever instances its events were published on', async () => {
    const userId = 9;
    await kits[0].enableWebhook(userId, 'LOAN_EXECUTED', '/slow');
    receiver.clear();
    receiver.respondWith({ status: 204, delayMs: 150 }, { path: '/slow' });
    const events = (instance: number) =>
      Array.from({ length: 12 }, (_, i) => ({
        userId,
        type: 'LOAN_EXECUTED' as never,
        severity: 'INFO' as never,
        title: `Slow ${instance}.${i}`,
        body: 'filled',
      }));
    // The owner leases what it publishes; what the others publish is due in the outbox, for the owner to claim.
    await Promise.all(kits.map((kit, instance) => kit.publisher.publishMany(events(instance))));
    await runSchedulers();

    const counts = countsByEvent();
    expect(counts.size).toBe(36);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(receiver.peakInFlight).toBeLessThanOrEqual(4);
    expect(receiver.peakInFlight).toBeGreaterThanOrEqual(2);
  });

  it("opens a dead endpoint's circuit on its 5th failure in a row, wherever its events were published, and skips it for all", async () => {
    const userId = 10;
    // A host that takes connections and drops them at once: every attempt fails to connect (unreachable).
    const dead = createServer((socket) => socket.destroy());
    dead.listen(0, '127.0.0.1');
    await once(dead, 'listening');
    let connections = 0;
    dead.on('connection', () => connections++);
    try {
      await instances[0].app.get(PreferencesService).upsert(userId, {
        type: 'LOAN_EXECUTED' as never,
        channel: NotificationChannel.WEBHOOK,
        enabled: true,
        webhookUrl: `https://127.0.0.1:${(dead.address() as AddressInfo).port}/dead`,
      });
      const events = (count: number, title: string) =>
        Array.from({ length: count }, (_, i) => ({
          userId,
          type: 'LOAN_EXECUTED' as never,
          severity: 'INFO' as never,
          title: `${title} ${i}`,
          body: 'x',
        }));
      // 5 unreachable attempts in a row open the owner's circuit: 2 + 2 + 1 published on the three instances.
      for (const [instance, count] of [2, 2, 1].entries()) {
        await kits[instance].publisher.publishMany(events(count, `opens ${instance}`));
        await runSchedulers();
      }
      expect(connections).toBe(5);

      for (const kit of kits) await kit.publisher.publishMany(events(2, 'after'));
      await runSchedulers();

      expect(connections).toBe(5);
      const outcomes: { outcome: string; attempts: number | string }[] = await instances[0].dataSource.query(
        'SELECT a.outcome, COUNT(*) AS attempts FROM webhook_delivery_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id ' +
          'WHERE d.user_id = ? GROUP BY a.outcome',
        [userId],
      );
      expect(Object.fromEntries(outcomes.map((row) => [row.outcome, Number(row.attempts)]))).toEqual({ connect_error: 5, circuit_open: 6 });
    } finally {
      dead.close();
    }
  });

  it('queues each FAILED delivery once when a recover lands on two instances at once (a client retry)', async () => {
    const userId = 8;
    const failed = 300;
    const at = clock.now() - 60_000;
    const eventIds = Array.from({ length: failed }, () => randomUUID());
    const { dataSource } = instances[0];
    await dataSource.query(
      `INSERT INTO webhook_events (id, user_id, type, body, created_at) VALUES ${eventIds.map(() => "(?, ?, 'LOAN_EXECUTED', '{}', ?)").join(', ')}`,
      eventIds.flatMap((id) => [id, userId, at]),
    );
    await dataSource.query(
      'INSERT INTO webhook_deliveries (event_id, user_id, user_partition, type, status, attempt_count, created_at, updated_at) ' +
        `VALUES ${eventIds.map(() => "(?, ?, ?, 'LOAN_EXECUTED', 'FAILED', 6, ?, ?)").join(', ')}`,
      eventIds.flatMap((id) => [id, userId, partitionOf(userId), at, at]),
    );

    const since = new Date(at - 60_000).toISOString();
    const answers = await Promise.all(
      instances
        .slice(0, 2)
        .map((instance) =>
          instance.http().post(`${DELIVERIES}/recover`).set('Authorization', instance.bearer(userId)).send({ since }).expect(202),
        ),
    );

    expect(answers.reduce((sum, answer) => sum + answer.body.queued, 0)).toBe(failed);
    const [pending] = await dataSource.query(
      "SELECT COUNT(*) AS deliveries, COUNT(DISTINCT event_id) AS events FROM webhook_deliveries WHERE user_id = ? AND status = 'PENDING'",
      [userId],
    );
    expect({ deliveries: Number(pending.deliveries), events: Number(pending.events) }).toEqual({ deliveries: failed, events: failed });
  });
});
