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
import { WOKEN_DRAIN_SPACING_MS } from '../../src/notifications/delivery/engine/wake-ups';
import { PartitionOwnership } from '../../src/notifications/delivery/partitions/partition-ownership';
import type { NotificationsModuleOptions } from '../../src/notifications/notifications-options.interface';
import { describeEachServerDatabase } from '../support/each-database';
import { freePort } from '../support/free-port';
import { startTestAppOn, type TestApp } from '../support/test-app';
import type { TestDatabase } from '../support/test-databases';

const TOKEN = 'internal-token-of-the-instances-0123456789';
const WAKE_PATH = '/api/v1/internal/notifications/wake';
const EVENTS = '/api/v1/internal/notifications/events';
const USERS = Array.from({ length: 40 }, (_, i) => i + 1);

/**
 * Instances behind one load balancer: an event published on an instance that does not own the user's partition starts
 * at once on the owner, which that instance wakes (`delivery.wakeUrl`), not at the owner's next look for due work.
 * The kit stops the polls and the test clock moves only by the wake-ups' spacing (25 ms a test): only a wake-up can start
 * these deliveries.
 */
describeEachServerDatabase('waking the owner of a partition on $name', (kind) => {
  let database: TestDatabase;
  let receiver: TestReceiver;
  let clock: TestClock;
  let instances: TestApp[];
  let kits: NotificationsTestKit[];
  const servers: Server[] = [];

  const start = async (overrides: Partial<NotificationsModuleOptions>, port: number, first: boolean) => {
    const options = {
      ...notificationsTestOptions({ receiver, clock }),
      encryptionKeys: [{ id: 'shared', key: encryptionKey }],
      internalApiToken: TOKEN,
      ...overrides,
    };
    const instance = await startTestAppOn(first ? database : { ...database, drop: async () => undefined }, options);
    servers.push(instance.app.getHttpServer().listen(port, '127.0.0.1'));
    await once(servers[servers.length - 1], 'listening');
    return instance;
  };
  const encryptionKey = randomBytes(32);

  beforeAll(async () => {
    database = await kind.create();
    receiver = await startTestReceiver();
    clock = new TestClock();
    const ports = [await freePort(), await freePort(), await freePort()];
    const wakeUrl = (port: number) => `http://127.0.0.1:${port}${WAKE_PATH}`;
    instances = [
      await start({ delivery: { wakeUrl: wakeUrl(ports[0]) } }, ports[0], true),
      await start({ delivery: { wakeUrl: wakeUrl(ports[1]) } }, ports[1], false),
      // The API tier: it publishes, owns no partition, and is never woken.
      await start({ role: 'api' }, ports[2], false),
    ];
    kits = instances.map((instance) => attachNotificationsTestKit(instance.app, { receiver, clock }));
    const rounds = async () => {
      for (const instance of instances.slice(0, 2)) await instance.app.get(PartitionOwnership).cycle();
    };
    await rounds();
    clock.advance(10_000); // the first taker's minimum hold: then it hands the other its share
    await rounds();
    await rounds();
    for (const userId of USERS) await kits[0].enableWebhook(userId, 'LOAN_EXECUTED', '/woken');
  });

  afterAll(async () => {
    for (const instance of instances.slice(1)) await instance.close();
    await instances[0].close();
    await receiver.close();
  });

  // The owners' last drains (at start, or the last test's) are a spacing ago: a wake-up drains at once.
  beforeEach(() => clock.advance(WOKEN_DRAIN_SPACING_MS));

  const ownerOf = (userId: number) => instances.findIndex((instance) => instance.app.get(PartitionOwnership).covers(userId, clock.now()));
  const titles = (requests: readonly ReceivedRequest[]) => requests.map((request) => request.json<{ title: string }>().title).sort();
  /** A user each delivering instance owns. */
  const usersOwnedBy = () => [0, 1].map((index) => USERS.find((userId) => ownerOf(userId) === index)!);

  it('starts an event published on the other delivering instance at once, on the owner it wakes', async () => {
    receiver.clear();
    const users = usersOwnedBy();
    expect(users.every((userId) => userId !== undefined)).toBe(true);
    // Each instance publishes for the user the other one owns.
    for (const [index, userId] of users.entries())
      await kits[1 - index].publisher.publishMany([
        { userId, type: 'LOAN_EXECUTED' as never, severity: 'INFO' as never, title: `woken ${userId}`, body: 'x' },
      ]);
    const requests = await receiver.waitForDelivery({ count: 2, timeoutMs: 5_000 });
    expect(titles(requests)).toEqual(users.map((userId) => `woken ${userId}`).sort());
  });

  it('starts an event published through the API tier (role api) on the owner it wakes', async () => {
    receiver.clear();
    const users = usersOwnedBy();
    for (const userId of users)
      await instances[2]
        .http()
        .post(EVENTS)
        .set('Authorization', `Bearer ${TOKEN}`)
        .send({ userId, type: 'LOAN_EXECUTED', severity: 'INFO', title: `woken ${userId}`, body: 'x' })
        .expect(202);
    const requests = await receiver.waitForDelivery({ count: 2, timeoutMs: 5_000 });
    expect(titles(requests)).toEqual(users.map((userId) => `woken ${userId}`).sort());
  });

  it('drains for wake-ups that come within the spacing of the last drain once it has passed, losing none', async () => {
    receiver.clear();
    const [userId] = usersOwnedBy();
    const publish = (title: string) =>
      kits[1].publisher.publishMany([{ userId, type: 'LOAN_EXECUTED' as never, severity: 'INFO' as never, title, body: 'x' }]);
    await publish('first');
    expect(titles(await receiver.waitForDelivery({ count: 1, timeoutMs: 5_000 }))).toEqual(['first']);
    // Woken twice more within 25 ms (of the frozen clock) of that drain: one drain, on a timer, takes both.
    await publish('second');
    await publish('third');
    expect(titles(await receiver.waitForDelivery({ count: 3, timeoutMs: 5_000 }))).toEqual(['first', 'second', 'third']);
  });

  it('answers a wake-up without the internal token 401, and one with it 204', async () => {
    await instances[0].http().post(WAKE_PATH).expect(401);
    await instances[0].http().post(WAKE_PATH).set('Authorization', 'Bearer wrong-token-wrong-token-wrong-token').expect(401);
    await instances[0].http().post(WAKE_PATH).set('Authorization', `Bearer ${TOKEN}`).expect(204);
  });
});
