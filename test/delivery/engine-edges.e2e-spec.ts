import { randomUUID } from 'node:crypto';
import type { EventType } from '../../src/notifications/catalog/event-catalog';
import { DeliveryOutboxRepository } from '../../src/notifications/delivery/engine/delivery-outbox.repository';
import { OutboxEngine } from '../../src/notifications/delivery/engine/outbox-engine.service';
import { PreferencesService } from '../../src/notifications/preferences/preferences.service';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';

const event = (userId: number, title = 'Rate spike') => ({ userId, type: 'RATE_SPIKE', severity: 'WARNING', title, body: 'USD FRR 0.08%' });
const stored = (userId: number, count: number) =>
  Array.from({ length: count }, () => ({ id: randomUUID(), userId, type: 'RATE_SPIKE' as EventType, body: '{}' }));

/**
 * Runs a drain whose call to `target[method]` is held, its own work done, until the engine's shutdown has begun; then
 * both end.
 */
async function drainHeldAcrossShutdown<T extends object>(engine: OutboxEngine, target: T, method: keyof T & string): Promise<void> {
  let reached!: () => void;
  const held = new Promise<void>((resolve) => (reached = resolve));
  let letGo!: () => void;
  const gate = new Promise<void>((resolve) => (letGo = resolve));
  const original = (target[method] as (...args: unknown[]) => Promise<unknown>).bind(target);
  vi.spyOn(target as Record<string, (...args: unknown[]) => Promise<unknown>>, method).mockImplementationOnce(async (...args) => {
    const result = await original(...args);
    reached();
    await gate;
    return result;
  });
  const draining = engine.drain();
  await held;
  const stopping = engine.beforeApplicationShutdown();
  letGo();
  await Promise.all([draining, stopping]);
}

describeEachDatabase('outbox engine edge cases on $name', (kind) => {
  const t = appWithKitPerSuite(kind, { delivery: { concurrency: 8, perEndpointConcurrency: 1, timeoutMs: 300, leaseMs: 20_000 } });
  afterEach(async () => {
    vi.restoreAllMocks();
    await t.settle();
  });

  it('a publish whose commit succeeded but whose read-back failed is acknowledged, and delivered once its lease expires', async () => {
    await t.enableWebhook(1, 'RATE_SPIKE', '/read-back');
    await t.enableWebhook(31, 'RATE_SPIKE', '/read-back-too');
    const query = t.dataSource.query.bind(t.dataSource);
    vi.spyOn(t.dataSource, 'query').mockImplementation((sql: string, ...rest: unknown[]) =>
      sql.startsWith('SELECT id, event_id FROM webhook_deliveries WHERE locked_by')
        ? Promise.reject(new Error('connection lost'))
        : (query as (sql: string, ...rest: unknown[]) => Promise<unknown>)(sql, ...rest),
    );
    // Two events: a lone event's delivery id comes with its insert, only a group's are read back.
    const published = await t.publish({ events: [event(1), event(31)] }).expect(202);
    vi.restoreAllMocks();

    expect(published.body.queuedDeliveries).toBe(2);
    expect(t.receiver.requests).toHaveLength(0);
    t.advance(20_001);
    expect(await t.runScheduler()).toBe(2);
    expect(t.receiver.requests.filter((request) => request.path.startsWith('/read-back'))).toHaveLength(2);
  });

  it("a lone event is attempted without reading its delivery back: its id is the insert's", async () => {
    await t.enableWebhook(32, 'RATE_SPIKE', '/lone');
    const query = vi.spyOn(t.dataSource, 'query');
    await t.publish(event(32)).expect(202);
    await t.waitForDelivery({ path: '/lone' });

    expect(query.mock.calls.filter(([sql]) => String(sql).startsWith('SELECT id, event_id FROM webhook_deliveries'))).toHaveLength(0);
    const [row] = await t.dataSource.query(`SELECT d.id, d.status, d.attempt_count FROM webhook_deliveries d WHERE d.user_id = 32`);
    expect(row.status).toBe('DELIVERED');
    expect(Number(row.attempt_count)).toBe(1);
    const [attempt] = await t.dataSource.query(`SELECT delivery_id FROM webhook_delivery_attempts WHERE delivery_id = ?`, [row.id]);
    expect(Number(attempt.delivery_id)).toBe(Number(row.id));
  });

  it('a record that fails is retried: the outcome is kept, not thrown away', async () => {
    await t.enableWebhook(2, 'RATE_SPIKE', '/record');
    const outbox = t.app.get(DeliveryOutboxRepository);
    vi.spyOn(outbox, 'recordAttempts').mockRejectedValueOnce(new Error('deadlock'));
    await t.publish(event(2)).expect(202);
    await t.waitForDelivery({ path: '/record' });

    const [row] = await t.dataSource.query(`SELECT d.status, d.attempt_count FROM webhook_deliveries d WHERE d.user_id = 2`);
    expect(row.status).toBe('DELIVERED');
    expect(Number(row.attempt_count)).toBe(1);
  });

  it('a record that fails as its lease is about to end is retried all the same: stored while no other instance took the delivery', async () => {
    await t.enableWebhook(6, 'RATE_SPIKE', '/late-record');
    const outbox = t.app.get(DeliveryOutboxRepository);
    vi.spyOn(outbox, 'recordAttempts').mockImplementationOnce(() => {
      t.advance(16_000); // a slow database: less than the tolerated clock skew is left of the 20 s lease
      return Promise.reject(new Error('deadlock'));
    });
    await t.publish(event(6)).expect(202);
    await t.waitForDelivery({ path: '/late-record' });

    const [row] = await t.dataSource.query(`SELECT d.status, d.attempt_count FROM webhook_deliveries d WHERE d.user_id = 6`);
    expect(row.status).toBe('DELIVERED');
    expect(Number(row.attempt_count)).toBe(1);
  });

  it('a record does not wait for a slow record commit ahead of it', async () => {
    await t.enableWebhook(8, 'RATE_SPIKE', '/slow-commit');
    await t.enableWebhook(9, 'RATE_SPIKE', '/after-slow-commit');
    const outbox = t.app.get(DeliveryOutboxRepository);
    const recordAttempts = outbox.recordAttempts.bind(outbox);
    let resume!: () => void;
    let stallBegan!: () => void;
    const stalled = new Promise<void>((resolve) => (resume = resolve));
    const inStall = new Promise<void>((resolve) => (stallBegan = resolve));
    let stalling = true;
    vi.spyOn(outbox, 'recordAttempts').mockImplementation(async (attempts) => {
      // The record of user 8's attempt: a commit the database holds up (any other record, of earlier cases, goes through).
      if (stalling && attempts.some(({ claim }) => claim.userId === 8)) {
        stalling = false;
        stallBegan();
        await stalled;
      }
      return recordAttempts(attempts);
    });
    const statusOf = async (userId: number) =>
      (await t.dataSource.query(`SELECT status FROM webhook_deliveries WHERE user_id = ${userId}`))[0].status;

    await t.publish(event(8)).expect(202);
    await t.receiver.waitForDelivery({ path: '/slow-commit' });
    await inStall; // its record's commit has begun (after the group's linger), and hangs
    await t.publish(event(9)).expect(202);
    await t.receiver.waitForDelivery({ path: '/after-slow-commit' });

    try {
      await vi.waitFor(async () => expect(await statusOf(9)).toBe('DELIVERED'), { timeout: 5_000 });
      expect(await statusOf(8)).toBe('PENDING');
    } finally {
      resume();
    }
    await vi.waitFor(async () => expect(await statusOf(8)).toBe('DELIVERED'), { timeout: 5_000 });
  });

  it('a host transaction that commits after its deliveries’ lease ended: they are claimed within seconds, even when handing them back fails', async () => {
    await t.enableWebhook(7, 'RATE_SPIKE', '/late-commit');
    const engine = t.app.get(OutboxEngine);
    const targets = await t.app.get(PreferencesService).webhookTargets([{ userId: 7, type: 'RATE_SPIKE' as EventType }]);
    vi.spyOn(t.app.get(DeliveryOutboxRepository), 'release').mockRejectedValueOnce(new Error('connection lost'));
    await t.dataSource.transaction(async (manager) => {
      await engine.enqueueWithin(manager, stored(7, 1), targets);
      t.advance(20_001); // the host keeps its transaction open past the lease
    });

    await t.receiver.waitForDelivery({ path: '/late-commit', timeoutMs: 5_000 }); // no runScheduler: no minute tick
  });

  it('a claim that fails (the database went away) is tried again within seconds, not at the next minute tick', async () => {
    await t.enableWebhook(11, 'RATE_SPIKE', '/claim-retry');
    const outbox = t.app.get(DeliveryOutboxRepository);
    const now = t.clock.now();
    await outbox.enqueue(stored(11, 1), () => 'due', { token: randomUUID(), now, until: now });
    vi.spyOn(outbox, 'claimDue').mockRejectedValueOnce(new Error('connection lost'));

    await expect(t.app.get(OutboxEngine).drain()).rejects.toThrow('connection lost');
    await t.receiver.waitForDelivery({ path: '/claim-retry', timeoutMs: 5_000 }); // no runScheduler: no minute tick
  });

  it('concurrent enqueues never lease more than an endpoint’s share between them', async () => {
    await t.enableWebhook(3, 'RATE_SPIKE', '/share');
    t.receiver.respondWith('hang', { path: '/share' });
    const engine = t.app.get(OutboxEngine);
    const targets = await t.app.get(PreferencesService).webhookTargets([{ userId: 3, type: 'RATE_SPIKE' as EventType }]);
    // The inserts one after the other (SQLite runs one transaction at a time); the placements are computed at once.
    const outbox = t.app.get(DeliveryOutboxRepository);
    const enqueue = outbox.enqueue.bind(outbox);
    let previous: Promise<unknown> = Promise.resolve();
    vi.spyOn(outbox, 'enqueue').mockImplementation((...args) => {
      const next = previous.then(() => enqueue(...args));
      previous = next.catch(() => undefined);
      return next;
    });
    await Promise.all([engine.enqueue(stored(3, 4), targets), engine.enqueue(stored(3, 4), targets)]);

    const [{ leased, stored: all }] = await t.dataSource.query(
      `SELECT SUM(CASE WHEN locked_by IS NOT NULL THEN 1 ELSE 0 END) AS leased, COUNT(*) AS stored FROM webhook_deliveries WHERE user_id = 3`,
    );
    // The share (perEndpointConcurrency 1 × 4 held per slot) is used, and no more: the other four wait in the outbox.
    expect([Number(leased), Number(all)]).toEqual([4, 8]);
  });
});

describeEachDatabase('leases of a paused instance, on $name', (kind) => {
  const t = appWithKitPerSuite(kind);

  it('are retaken within seconds of expiring, not at the next minute tick, in role all', async () => {
    await t.enableWebhook(5, 'RATE_SPIKE', '/paused');
    const now = t.clock.now();
    // Leased by an instance that stopped right after (SIGSTOP, a long GC pause): nobody attempts it until its lease ends.
    await t.app.get(DeliveryOutboxRepository).enqueue(stored(5, 1), () => 'lease', { token: randomUUID(), now, until: now + 1_000 });
    expect(await t.runScheduler()).toBe(0); // the minute tick: still leased

    t.advance(1_001); // the lease ended; no runScheduler
    await t.receiver.waitForDelivery({ path: '/paused', timeoutMs: 5_000 });
  });
});

describeEachDatabase('a claim in flight at shutdown, on $name', (kind) => {
  const t = appWithKitPerSuite(kind);

  it('releases the rows it claimed after shutdown began instead of attempting them', async () => {
    await t.enableWebhook(4, 'RATE_SPIKE', '/late-claim');
    const outbox = t.app.get(DeliveryOutboxRepository);
    const engine = t.app.get(OutboxEngine);
    await outbox.enqueue(stored(4, 2), () => 'due', engine.lease());
    await drainHeldAcrossShutdown(engine, outbox, 'claimDue');

    expect(t.receiver.requests).toHaveLength(0);
    const rows = await t.dataSource.query('SELECT locked_by FROM webhook_deliveries WHERE user_id = 4');
    expect(rows.map((row: { locked_by: string | null }) => row.locked_by)).toEqual([null, null]);
  });
});

describeEachDatabase('webhook targets read at shutdown, on $name', (kind) => {
  const t = appWithKitPerSuite(kind);

  it('releases the rows whose webhook targets it was reading as shutdown began, instead of attempting them', async () => {
    await t.enableWebhook(6, 'RATE_SPIKE', '/late-targets');
    const outbox = t.app.get(DeliveryOutboxRepository);
    const engine = t.app.get(OutboxEngine);
    const preferences = t.app.get(PreferencesService);
    await outbox.enqueue(stored(6, 2), () => 'due', engine.lease());
    await drainHeldAcrossShutdown(engine, preferences, 'webhookTargets');

    // Attempts started now would outlive the drain (the sender closes after the grace): none is made.
    expect(t.receiver.requests).toHaveLength(0);
    const rows = await t.dataSource.query('SELECT locked_by, attempt_count FROM webhook_deliveries WHERE user_id = 6');
    expect(rows.map((row: { locked_by: string | null; attempt_count: number }) => [row.locked_by, Number(row.attempt_count)])).toEqual([
      [null, 0],
      [null, 0],
    ]);
  });
});
