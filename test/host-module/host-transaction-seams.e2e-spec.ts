import { EventType, Severity } from '@funding/notification-webhooks';
import { bootTestNotifications, type TestNotifications } from '@funding/notification-webhooks/testing';
import { DataSource, type EntityManager } from 'typeorm';
import { DbType } from '../../src/service/config/environment-variables';
import { databaseOptions } from '../../src/service/database/database-options';
import { WebhookDelivery } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { describeEachDatabase } from '../support/each-database';
import type { TestDatabase } from '../support/test-databases';

// Where a host's transaction meets the module's own work: a pool the host holds a connection of, and (on SQLite) the
// one connection every caller shares. Driven through the published testing kit, as a host's test suite would.
const POOL_SIZE = 2;

describeEachDatabase("the host's transactions and the module's on $name", (kind) => {
  let database: TestDatabase;
  let kit: TestNotifications;
  let dataSource: DataSource;
  let userId = 0;

  beforeAll(async () => {
    database = await kind.create();
    const config = database.config.type === DbType.sqlite ? database.config : { ...database.config, tuning: { poolSize: POOL_SIZE } };
    kit = await bootTestNotifications({ database: databaseOptions(config) });
    dataSource = kit.app.get(DataSource);
  });
  afterAll(async () => {
    await kit.close();
    await database.drop();
  });
  beforeEach(async () => {
    userId++;
    kit.receiver.clear();
    await kit.enableWebhook(userId, EventType.LOAN_EXECUTED);
  });

  const event = (title: string) => ({ userId, type: EventType.LOAN_EXECUTED, severity: Severity.INFO, title, body: '1000 USD' });
  const deliveries = () => dataSource.getRepository(WebhookDelivery).countBy({ userId });
  /** Fails the test instead of hanging it when `work` never settles. */
  const within = <T>(ms: number, work: Promise<T>, what: string) =>
    Promise.race([
      work,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: still waiting after ${ms} ms`)), ms).unref()),
    ]);

  it(`commits ${POOL_SIZE * 2} host transactions publishing at once on a pool of ${POOL_SIZE}: the publish reads through the host's manager`, async () => {
    const transactions = Array.from({ length: POOL_SIZE * 2 }, (_, index) =>
      dataSource.transaction(async (manager) => {
        await manager.query('SELECT 1');
        return kit.publisher.publish(event(`order ${index}`), { manager });
      }),
    );
    const published = await within(10_000, Promise.all(transactions), 'host transactions');

    expect(published.map((result) => result.queuedDeliveries)).toEqual(Array(POOL_SIZE * 2).fill(1));
    await kit.waitForDelivery({ userId, count: POOL_SIZE * 2 });
    expect(await deliveries()).toBe(POOL_SIZE * 2);
  });

  it('keeps a publish that answered while a host transaction was open when that transaction rolls back', async () => {
    let opened!: () => void;
    const hostOpened = new Promise<void>((resolve) => (opened = resolve));
    let rollBack!: () => void;
    const hostMayEnd = new Promise<void>((resolve) => (rollBack = resolve));
    const host = dataSource.transaction(async (manager) => {
      await manager.query('SELECT 1');
      opened();
      await hostMayEnd;
      throw new Error('the host changed its mind');
    });
    await hostOpened;

    // Another caller publishes meanwhile. On a shared SQLite connection it used to commit as a savepoint of the host's.
    const publish = kit.publisher.publish(event('published by another caller'));
    await Promise.race([publish, new Promise((resolve) => setTimeout(resolve, 200))]);
    rollBack();
    await expect(host).rejects.toThrow('the host changed its mind');
    const { eventIds } = await publish;

    const [delivered] = await kit.waitForDelivery({ userId });
    expect(delivered.eventId).toBe(eventIds[0]);
    expect(await deliveries()).toBe(1);
  });

  /** Resolves once the module asks for a transaction of its own (after the publish validated and read its targets). */
  const moduleAsksForATransaction = () =>
    new Promise<void>((resolve) => {
      const transaction = dataSource.manager.transaction;
      const spy = vi.spyOn(dataSource.manager, 'transaction').mockImplementation(((...args: Parameters<typeof transaction>) => {
        spy.mockRestore();
        resolve();
        return transaction.apply(dataSource.manager, args);
      }) as typeof transaction);
    });

  it("keeps another caller's publish when a host's query runner transaction rolls back", async () => {
    let opened!: () => void;
    const hostOpened = new Promise<void>((resolve) => (opened = resolve));
    let rollBack!: () => void;
    const hostMayEnd = new Promise<void>((resolve) => (rollBack = resolve));
    // The host's own flow (say, another request): a transaction it starts and ends by hand.
    const host = (async () => {
      const queryRunner = dataSource.createQueryRunner();
      await queryRunner.connect();
      await queryRunner.startTransaction();
      try {
        await queryRunner.query('SELECT 1');
        opened();
        await hostMayEnd;
      } finally {
        await queryRunner.rollbackTransaction();
        await queryRunner.release();
      }
    })();
    await within(5_000, hostOpened, 'the host transaction');

    const asked = moduleAsksForATransaction();
    const publish = kit.publisher.publish(event('published by another caller'));
    await within(5_000, Promise.race([publish, asked]), 'the publish');
    rollBack();
    await within(5_000, host, 'the host rollback');
    const { eventIds } = await within(5_000, publish, 'the publish after the rollback');

    const [delivered] = await kit.waitForDelivery({ userId });
    expect(delivered.eventId).toBe(eventIds[0]);
    expect(await deliveries()).toBe(1);
  });

  it('refuses a publish without manager awaited inside a host transaction, naming { manager }, and stores nothing', async () => {
    let refusal: unknown;
    const host = dataSource.transaction(async (manager) => {
      await manager.query('SELECT 1');
      refusal = await kit.publisher.publish(event('published inside without manager')).catch((error: unknown) => error);
      throw new Error('the host changed its mind');
    });
    await expect(within(5_000, host, 'the host transaction')).rejects.toThrow('the host changed its mind');

    expect(refusal).toBeInstanceOf(TypeError);
    expect((refusal as Error).message).toMatch(/\{ manager \}/);
    await kit.settle();
    expect(await deliveries()).toBe(0);
    expect(kit.receiver.requests).toHaveLength(0);
  });

  it("publishes through a query runner's manager: delivered when it commits, nothing stored or sent when it rolls back", async () => {
    const inQueryRunner = async (title: string, end: 'commit' | 'rollback') => {
      const queryRunner = dataSource.createQueryRunner();
      await queryRunner.connect();
      await queryRunner.startTransaction();
      try {
        const published = await kit.publisher.publish(event(title), { manager: queryRunner.manager });
        if (end === 'commit') await queryRunner.commitTransaction();
        else await queryRunner.rollbackTransaction();
        return published;
      } finally {
        await queryRunner.release();
      }
    };

    const rolledBack = await within(5_000, inQueryRunner('rolled back', 'rollback'), 'the rolled back query runner');
    expect(rolledBack.queuedDeliveries).toBe(1);
    await kit.settle();
    expect(await deliveries()).toBe(0);
    expect(kit.receiver.requests).toHaveLength(0);

    const committed = await within(5_000, inQueryRunner('committed', 'commit'), 'the committed query runner');
    const [delivered] = await kit.waitForDelivery({ userId });
    expect(delivered.eventId).toBe(committed.eventIds[0]);
    expect(delivered.json()).toMatchObject({ title: 'committed' });
    expect(await deliveries()).toBe(1);
  });

  it('runs concurrent transactions one at a time on SQLite, in the order asked', async () => {
    const order: string[] = [];
    const step = (name: string) => (manager: EntityManager) =>
      manager.query('SELECT 1').then(() => {
        order.push(`${name} begins`);
        return manager.query('SELECT 1').then(() => order.push(`${name} ends`));
      });
    await Promise.all([
      dataSource.transaction(step('first')),
      dataSource.transaction(step('second')),
      dataSource.transaction(step('third')),
    ]);

    if (kind.name === 'sqlite')
      expect(order).toEqual(['first begins', 'first ends', 'second begins', 'second ends', 'third begins', 'third ends']);
    else expect(order).toHaveLength(6);
  });
});
