import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import type { Server } from 'node:net';
import {
  attachNotificationsTestKit,
  notificationsTestOptions,
  type NotificationsTestKit,
  type ReceivedRequest,
  startTestReceiver,
  TestClock,
  type TestReceiver,
} from '@funding/notification-webhooks/testing';
import { DeliveryEvents } from '../../src/notifications/delivery/events/delivery-events.service';
import {
  PARTITION_MIN_HOLD_MS,
  PARTITION_RENEW_MS,
  PartitionOwnership,
} from '../../src/notifications/delivery/partitions/partition-ownership';
import { PARTITION_COUNT } from '../../src/notifications/delivery/partitions/partitions';
import { RETRY_DELAYS_MS } from '../../src/notifications/delivery/retry-policy';
import { describeEachServerDatabase } from '../support/each-database';
import { freePort } from '../support/free-port';
import { SETTINGS } from '../support/settings-api';
import { startTestAppOn, type TestApp } from '../support/test-app';
import type { TestDatabase } from '../support/test-databases';

const TOKEN = 'internal-token-of-the-instances-0123456789';
const EVENTS_PATH = '/api/v1/internal/notifications/events';
const WAKE_PATH = '/api/v1/internal/notifications/wake';
const USER_ID = 7;
const PATH = '/ordered';
/** Events published, one after the other, through the two instances in turn. */
const EVENT_COUNT = 6;
/** How many times the receiver fails the first delivery (sequence 1) before it answers 2xx. */
const HEAD_FAILURES = 3;

/** What the receiver saw of one request, and which deliveries the instances had recorded final when it arrived. */
interface Arrival {
  readonly sequence: number;
  readonly title: string;
  readonly status: number;
  readonly finalBefore: ReadonlySet<number>;
}

/**
 * Ordered delivery across instances. Two instances on one MySQL/MariaDB database, the user's partition owned by one of
 * them, each waking the other's owner when it publishes (as behind a load balancer). A user with ordered delivery on
 * for one URL (two event types posting there); events published through both instances in turn, while the receiver
 * fails the first delivery three times (its retries 1, 5 and 15 min later, on the test clock) and then answers. The
 * receiver must see the deliveries one at a time in `X-Service-Sequence` order: none before the one ahead of it is final
 * (as recorded by the instance that sent it), each delivered exactly once.
 */
describeEachServerDatabase('ordered delivery with two instances on $name', (kind) => {
  let database: TestDatabase;
  let receiver: TestReceiver;
  let clock: TestClock;
  let instances: TestApp[];
  let kits: NotificationsTestKit[];
  const servers: Server[] = [];
  const encryptionKey = { id: 'shared', key: randomBytes(32) };
  /** Deliveries an instance recorded final (DELIVERED, FAILED), as their records were announced. */
  const finals = new Set<number>();
  const arrivals: Arrival[] = [];

  beforeAll(async () => {
    database = await kind.create();
    receiver = await startTestReceiver();
    clock = new TestClock();
    const ports = [await freePort(), await freePort()];
    instances = [];
    for (const [index, port] of ports.entries()) {
      const instance = await startTestAppOn(index === 0 ? database : { ...database, drop: async () => undefined }, {
        ...notificationsTestOptions({ receiver, clock }),
        encryptionKeys: [encryptionKey],
        internalApiToken: TOKEN,
        delivery: { wakeUrl: `http://127.0.0.1:${port}${WAKE_PATH}` },
      });
      servers.push(instance.app.getHttpServer().listen(port, '127.0.0.1'));
      await once(servers[index], 'listening');
      instances.push(instance);
    }
    kits = instances.map((instance) => attachNotificationsTestKit(instance.app, { receiver, clock }));
    // Announced after the record's commit, before the instance claims what comes next in the stream.
    for (const instance of instances)
      instance.app.get(DeliveryEvents).attemptRecorded.subscribe(({ deliveryId, status }) => {
        if (status !== 'PENDING') finals.add(deliveryId);
      });
    // The first to look takes all 256, alone alive; after its minimum hold it hands the other its share.
    await rounds();
    clock.advance(PARTITION_MIN_HOLD_MS);
    await rounds();
    await rounds();
    expect(instances.map((instance) => ownershipOf(instance).count).reduce((sum, n) => sum + n, 0)).toBe(PARTITION_COUNT);
    expect(instances.every((instance) => ownershipOf(instance).count > 0)).toBe(true);
  });

  afterAll(async () => {
    await instances?.[1]?.close();
    await instances?.[0]?.close();
    await receiver?.close();
  });

  const ownershipOf = (instance: TestApp) => instance.app.get(PartitionOwnership);
  const rounds = async () => {
    for (const instance of instances) await ownershipOf(instance).cycle();
  };
  /** The test clock moves by renewal intervals, both instances renewing after each step: no partition moves meanwhile. */
  const advance = async (ms: number) => {
    for (let left = ms; left > 0; left -= PARTITION_RENEW_MS) {
      clock.advance(Math.min(left, PARTITION_RENEW_MS));
      await rounds();
    }
  };
  /** Every attempt started so far on either instance is recorded. */
  const settle = () => Promise.all(kits.map((kit) => kit.settle()));
  /** Both instances' scheduler runs at once, as their minute ticks may coincide; then every record is settled. */
  const runSchedulers = async () => {
    await Promise.all(kits.map((kit) => kit.runScheduler()));
    await settle();
  };
  let published = 0;
  /** The next event, through the instance whose turn it is (0, 1, 0, …), by the internal endpoint; types alternate too. */
  const publishNext = async () => {
    const n = ++published;
    await instances[(n - 1) % 2]
      .http()
      .post(EVENTS_PATH)
      .set('Authorization', `Bearer ${TOKEN}`)
      .send({ userId: USER_ID, type: n % 2 === 1 ? 'RATE_SPIKE' : 'RATE_DROP', severity: 'INFO', title: `event ${n}`, body: 'x' })
      .expect(202);
  };
  const sequenceOf = (request: ReceivedRequest) => Number(request.headers['x-service-sequence']);
  const sentSequences = () => arrivals.map((arrival) => arrival.sequence);

  it('sends each delivery once, in sequence order, none before the one ahead of it is final', async () => {
    // Both types post to one URL (one stream), its ordering turned on through the settings API of either instance.
    await kits[0].enableWebhook(USER_ID, 'RATE_SPIKE', PATH);
    await kits[1].enableWebhook(USER_ID, 'RATE_DROP', PATH);
    await instances[1]
      .http()
      .put(SETTINGS)
      .set('Authorization', instances[1].bearer(USER_ID))
      .set('Content-Type', 'application/json')
      .send({ type: 'RATE_DROP', channel: 'WEBHOOK', enabled: true, webhookUrl: receiver.url(PATH), orderedDelivery: true })
      .expect(200);
    expect(instances.filter((instance) => ownershipOf(instance).covers(USER_ID, clock.now()))).toHaveLength(1);

    let headFailuresLeft = HEAD_FAILURES;
    receiver.respondWith(
      (request) => {
        const sequence = sequenceOf(request);
        const status = sequence === 1 && headFailuresLeft-- > 0 ? 500 : 204;
        arrivals.push({ sequence, title: request.json<{ title: string }>().title, status, finalBefore: new Set(finals) });
        return { status };
      },
      { path: PATH },
    );

    // The first event goes at once (its owner drains, woken when published on the other instance), and fails.
    await publishNext();
    await receiver.waitForDelivery({ path: PATH });
    await settle();
    // The next two, one through each instance: they wait behind it, whatever either instance claims meanwhile.
    await publishNext();
    await publishNext();
    await settle();
    await runSchedulers();
    expect(sentSequences()).toEqual([1]);

    // Its retries, 1 and 5 min later, fail too; more events are published between them, still through both instances.
    await advance(RETRY_DELAYS_MS[0]);
    await runSchedulers();
    await publishNext();
    await publishNext();
    await settle();
    await advance(RETRY_DELAYS_MS[1]);
    await runSchedulers();
    await publishNext();
    await settle();
    await runSchedulers();
    expect(sentSequences()).toEqual([1, 1, 1]);

    // 15 min later it is delivered; the rest follow it one by one, without the clock moving.
    await advance(RETRY_DELAYS_MS[2]);
    await runSchedulers();
    await receiver.waitForDelivery({ path: PATH, count: HEAD_FAILURES + EVENT_COUNT, timeoutMs: 15_000 });
    await settle();
    await runSchedulers(); // nothing left: a last look by both finds nothing to send

    // In sequence order, the head's attempts first, each event with the number of its place in the publish order.
    expect(sentSequences()).toEqual([...Array<number>(HEAD_FAILURES + 1).fill(1), 2, 3, 4, 5, 6]);
    expect(arrivals.every((arrival) => arrival.title === `event ${arrival.sequence}`)).toBe(true);
    // Each sequence delivered (answered 2xx) exactly once.
    expect(arrivals.filter((arrival) => arrival.status === 204).map((arrival) => arrival.sequence)).toEqual([1, 2, 3, 4, 5, 6]);

    const rows: { id: number | string; sequence: number | string; status: string; attempt_count: number | string }[] =
      await instances[0].dataSource.query(
        'SELECT id, sequence, status, attempt_count FROM webhook_deliveries WHERE user_id = ? ORDER BY sequence',
        [USER_ID],
      );
    expect(rows.map((row) => [Number(row.sequence), row.status, Number(row.attempt_count)])).toEqual([
      [1, 'DELIVERED', HEAD_FAILURES + 1],
      ...[2, 3, 4, 5, 6].map((sequence) => [sequence, 'DELIVERED', 1]),
    ]);
    // None started before the one ahead of it was final: when a request for sequence n arrived, an instance had
    // already recorded the delivery of n - 1 DELIVERED (or FAILED).
    const idOf = new Map(rows.map((row) => [Number(row.sequence), Number(row.id)]));
    const early = arrivals
      .filter((arrival) => arrival.sequence > 1 && !arrival.finalBefore.has(idOf.get(arrival.sequence - 1)!))
      .map((arrival) => arrival.sequence);
    expect(early).toEqual([]);
  });
});
