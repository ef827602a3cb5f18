import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager } from 'typeorm';
import { DeliveryStatus, WebhookDelivery } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { WebhookEvent } from '../../src/notifications/delivery/entities/webhook-event.entity';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';

// The host's own table, written in the same transaction as the publish.
const CREATE_ORDERS = 'CREATE TABLE host_orders (id VARCHAR(36) PRIMARY KEY, amount INT NOT NULL)';

describeEachDatabase("publish inside the host's transaction on $name", (kind) => {
  const t = appWithKitPerSuite(kind);
  let user = 0;
  let userId: number;

  beforeAll(async () => {
    await t.dataSource.query(CREATE_ORDERS);
  });
  beforeEach(async () => {
    userId = ++user;
    t.receiver.clear();
    await t.enableWebhook(userId, 'LOAN_EXECUTED', `/u${userId}`);
  });

  const event = (title = 'Loan executed') => ({
    userId,
    type: 'LOAN_EXECUTED' as never,
    severity: 'INFO' as never,
    title,
    body: '1000 USD',
  });
  const saveOrder = async (manager: EntityManager) => {
    const id = randomUUID();
    await manager.query('INSERT INTO host_orders (id, amount) VALUES (?, ?)', [id, 1000]);
    return id;
  };
  const orderExists = async (id: string) => (await t.dataSource.query('SELECT id FROM host_orders WHERE id = ?', [id])).length === 1;
  const storedFor = async () => ({
    events: await t.dataSource.getRepository(WebhookEvent).countBy({ userId }),
    deliveries: await t.dataSource.getRepository(WebhookDelivery).findBy({ userId }),
  });

  it('stores and sends nothing when the host rolls back', async () => {
    let orderId = '';
    const failed = t.dataSource.transaction(async (manager) => {
      orderId = await saveOrder(manager);
      const published = await t.publisher.publish(event(), { manager });
      expect(published.queuedDeliveries).toBe(1);
      throw new Error('the host changed its mind');
    });
    await expect(failed).rejects.toThrow('the host changed its mind');
    await t.settle();

    expect(await orderExists(orderId)).toBe(false);
    expect(await storedFor()).toEqual({ events: 0, deliveries: [] });
    expect(t.receiver.requests).toHaveLength(0);
  });

  it('sends nothing before the commit, then delivers once at once (no scheduler run)', async () => {
    let eventId = '';
    const orderId = await t.dataSource.transaction(async (manager) => {
      const id = await saveOrder(manager);
      [eventId] = (await t.publisher.publish(event(), { manager })).eventIds;
      await t.settle();
      expect(t.receiver.requests).toHaveLength(0);
      return id;
    });

    const [hook] = await t.waitForDelivery({ userId });
    expect(hook.eventId).toBe(eventId);
    expect(await orderExists(orderId)).toBe(true);
    const { events, deliveries } = await storedFor();
    expect(events).toBe(1);
    expect(deliveries.map((d) => [d.eventId, d.status, d.attemptCount])).toEqual([[eventId, DeliveryStatus.DELIVERED, 1]]);
    expect(t.receiver.requests).toHaveLength(1);
  });

  it('commits with the outer transaction when the publish sits in a nested one', async () => {
    await t.dataSource.transaction(async (outer) => {
      await saveOrder(outer);
      await outer.transaction((inner) => t.publisher.publish(event('nested'), { manager: inner }));
      await t.settle();
      expect(t.receiver.requests).toHaveLength(0); // the savepoint was released, the transaction is still open
    });
    const [hook] = await t.waitForDelivery({ userId });
    expect(hook.json()).toMatchObject({ title: 'nested' });
  });

  it('publishes many events in one host transaction, each delivered once', async () => {
    const published = await t.dataSource.transaction(async (manager) => {
      await saveOrder(manager);
      return t.publisher.publishMany([event('a'), event('b'), event('c')], { manager });
    });
    expect(published.queuedDeliveries).toBe(3);
    const hooks = await t.waitForDelivery({ userId, count: 3 });
    expect(hooks.map((hook) => hook.eventId).sort()).toEqual([...published.eventIds].sort());
  });

  it('refuses a manager outside any transaction, naming what to pass', async () => {
    const refused = t.publisher.publish(event(), { manager: t.dataSource.manager });
    await expect(refused).rejects.toBeInstanceOf(TypeError);
    await expect(refused).rejects.toThrow('publish({ manager }): the manager is not inside a transaction');
    expect(await storedFor()).toEqual({ events: 0, deliveries: [] });
  });

  it("refuses the transaction's manager of another DataSource than the module's, and stores nothing", async () => {
    const other = await new DataSource({ type: 'better-sqlite3', database: ':memory:' }).initialize();
    try {
      const refused = other.transaction((manager) => t.publisher.publish(event(), { manager }));
      await expect(refused).rejects.toBeInstanceOf(TypeError);
      await expect(refused).rejects.toThrow("publish({ manager }): the manager belongs to another DataSource than NotificationsModule's");
    } finally {
      await other.destroy();
    }
    expect(await storedFor()).toEqual({ events: 0, deliveries: [] });
  });
});
