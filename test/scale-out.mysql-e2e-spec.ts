import { randomBytes } from 'node:crypto';
import { DeliveryOutboxRepository } from '../src/notifications/delivery/delivery-outbox.repository';
import { DeliveryWorker } from '../src/notifications/delivery/delivery-worker';
import { WebhookPublisher } from '../src/notifications/delivery/webhook-publisher';
import { DeliveryScheduler } from '../src/notifications/scheduler/delivery-scheduler';
import { FakeClock } from './support/fake-clock';
import { startTestAppOn, type TestApp } from './support/test-app';
import { TEST_DATABASE_KINDS, type TestDatabase } from './support/test-databases';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver';

const EVENTS = 600;
const USER = 7;

// Several instances on one MySQL/MariaDB database, each with its own connection pool, as in production.
describe.each(TEST_DATABASE_KINDS.filter((kind) => kind.name === 'mysql'))('three instances sharing $name', (kind) => {
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  let clock: FakeClock;
  let instances: TestApp[];
  const encryptionKey = { id: 'shared', key: randomBytes(32) };

  beforeAll(async () => {
    database = await kind.create();
    receiver = await startWebhookReceiver();
    clock = new FakeClock();
    const options = { allowedCidrs: ['127.0.0.0/8'], extraCaPem: receiver.caPem, clock, encryptionKeys: [encryptionKey], delivery: { batchSize: 50 } };
    instances = [];
    for (let i = 0; i < 3; i++) instances.push(await startTestAppOn(i === 0 ? database : { ...database, drop: async () => undefined }, options));
    await instances[0]
      .http()
      .put('/api/v1/settings/notifications')
      .set('Authorization', instances[0].bearer(USER))
      .send({ type: 'LOAN_EXECUTED', channel: 'WEBHOOK', enabled: true, webhookUrl: receiver.url('/scale') })
      .expect(200);
  });

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

  it('attempts every due delivery exactly once when all instances tick at the same time', async () => {
    receiver.respondWith({ status: 500 });
    const publisher = instances[0].app.get(WebhookPublisher);
    const events = Array.from({ length: EVENTS }, (_, i) => ({ userId: USER, type: 'LOAN_EXECUTED' as never, severity: 'INFO' as never, title: `Loan ${i}`, body: 'filled' }));
    const { queuedDeliveries } = await publisher.publishMany(events);
    expect(queuedDeliveries).toBe(EVENTS);
    await instances[0].app.get(DeliveryWorker).idle();
    expect(receiver.requests).toHaveLength(EVENTS);

    receiver.respondWith({ status: 204 });
    clock.advance(60_000);
    const attempted = await Promise.all(instances.map((instance) => instance.app.get(DeliveryScheduler).tick()));

    expect(attempted.reduce((sum, n) => sum + n, 0)).toBe(EVENTS);
    expect(attempted.filter((n) => n > 0).length).toBeGreaterThan(1);
    const counts = countsByEvent();
    expect(counts.size).toBe(EVENTS);
    expect([...counts.values()].every((n) => n === 2)).toBe(true);
  });

  it('lets another instance deliver what a crashed instance had leased, once the lease expires', async () => {
    receiver.requests.length = 0;
    receiver.respondWith({ status: 500 });
    const publisher = instances[0].app.get(WebhookPublisher);
    await publisher.publishMany([{ userId: USER, type: 'LOAN_EXECUTED' as never, severity: 'INFO' as never, title: 'crash', body: 'x' }]);
    await instances[0].app.get(DeliveryWorker).idle();
    receiver.respondWith({ status: 204 });
    clock.advance(60_000);

    const crashed = instances[1].app.get(DeliveryOutboxRepository);
    const leased = await crashed.claimDue(100, instances[1].app.get(DeliveryWorker).lease());
    expect(leased).toHaveLength(1);
    expect(await instances[2].app.get(DeliveryScheduler).tick()).toBe(0);

    clock.advance(60_001);
    expect(await instances[2].app.get(DeliveryScheduler).tick()).toBe(1);
    expect(receiver.requests).toHaveLength(2);
  });
});
