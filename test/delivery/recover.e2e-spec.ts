import { randomUUID } from 'node:crypto';
import type { EntitySubscriberInterface, QueryRunner } from 'typeorm';
import { EventType } from '../../src/notifications/catalog/event-catalog';
import { RECOVER_LIMIT } from '../../src/notifications/delivery/engine/recovery-pacer';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import { DeliveryStatus, WebhookDelivery } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { WebhookEvent } from '../../src/notifications/delivery/entities/webhook-event.entity';
import { RETRY_DELAYS_MS } from '../../src/notifications/delivery/retry-policy';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { DELIVERIES } from '../support/settings-api';

const RECOVER = `${DELIVERIES}/recover`;
const MINUTE = 60_000;

describeEachDatabase('recover failed deliveries over a time window on $name', (kind) => {
  const t = appWithKitPerSuite(kind);
  let user = 0;
  let userId: number;

  beforeEach(() => {
    userId = ++user;
    t.receiver.clear();
    t.advance(MINUTE); // a fresh rate-limit window
  });

  const recover = (body: object, as = userId) => t.http().post(RECOVER).set('Authorization', t.bearer(as)).send(body);
  const deliveries = async (as = userId) => (await t.http().get(DELIVERIES).set('Authorization', t.bearer(as)).expect(200)).body.data;
  const event = (type: string, title: string, as = userId) => ({ userId: as, type, severity: 'INFO', title, body: 'x' });

  const pendingOf = (as: number) => t.dataSource.getRepository(WebhookDelivery).findBy({ userId: as, status: DeliveryStatus.PENDING });

  /** Publishes to a receiver that answers 500 and walks the retry schedule until every delivery ended FAILED. */
  const failAll = async (events: Array<{ userId: number }>) => {
    t.receiver.respondWith({ status: 500 });
    await t.publish({ events }).expect(202);
    await t.settle();
    const users = [...new Set(events.map((e) => e.userId))];
    const pending = async () => (await Promise.all(users.map(pendingOf))).flat().length;
    // A scheduler run takes a fair share per user; each run here makes every remaining retry due.
    for (let run = 0; run < 200 && (await pending()) > 0; run++) {
      t.advance(RETRY_DELAYS_MS.at(-1)! + MINUTE);
      await t.runScheduler();
    }
    t.advance(MINUTE); // past the last attempt's end (its start on the test clock plus its real duration)
    t.receiver.respondWith({ status: 204 });
  };

  it('queues a new cycle of the FAILED deliveries in the window: same event ids and bytes, once', async () => {
    await t.enableWebhook(userId, 'RATE_SPIKE', `/u${userId}`);
    await t.enableWebhook(userId, 'LOAN_EXECUTED', `/u${userId}`);
    const since = new Date(t.clock.now()).toISOString();
    await failAll([event('RATE_SPIKE', 'a'), event('RATE_SPIKE', 'b'), event('LOAN_EXECUTED', 'c')]);
    const failed = await deliveries();
    expect(failed.map((d: { status: string }) => d.status)).toEqual(['FAILED', 'FAILED', 'FAILED']);
    const firstBodies = new Map(t.receiver.requests.map((r) => [r.eventId, r.rawBody.toString('utf8')]));
    t.receiver.clear();

    expect((await recover({ since, type: 'LOAN_EXECUTED' }).expect(202)).body).toEqual({ queued: 1, more: false });
    expect((await recover({ since }).expect(202)).body).toEqual({ queued: 2, more: false }); // the LOAN_EXECUTED one is queued already
    await t.runScheduler();

    const resent = await t.waitForDelivery({ userId, count: 3 });
    expect(resent).toHaveLength(3);
    for (const request of resent) expect(request.rawBody.toString('utf8')).toBe(firstBodies.get(request.eventId));
    const after = await deliveries();
    expect(after.filter((d: { status: string }) => d.status === 'DELIVERED')).toHaveLength(3);
    expect(new Set(after.map((d: { eventId: string }) => d.eventId)).size).toBe(3);

    t.advance(MINUTE);
    expect((await recover({ since }).expect(202)).body).toEqual({ queued: 0, more: false }); // nothing FAILED is left as its event's latest
  });

  it('queues each delivery once when two recover calls of the user run at the same time', async () => {
    await t.enableWebhook(userId, 'RATE_SPIKE', `/u${userId}`);
    const since = new Date(t.clock.now()).toISOString();
    await failAll([event('RATE_SPIKE', 'a'), event('RATE_SPIKE', 'b')]);
    const answers = await Promise.all([recover({ since }).expect(202), recover({ since }).expect(202)]);
    expect(answers.map((answer) => answer.body.queued).sort()).toEqual([0, 2]);
  });

  it("recovers only the window's deliveries, and only the caller's", async () => {
    const other = userId + 1000;
    await t.enableWebhook(userId, 'RATE_SPIKE', `/u${userId}`);
    await t.enableWebhook(other, 'RATE_SPIKE', `/u${other}`);
    await failAll([event('RATE_SPIKE', 'early'), event('RATE_SPIKE', 'theirs', other)]);
    const between = new Date(t.clock.now()).toISOString();
    await failAll([event('RATE_SPIKE', 'late')]);
    t.receiver.clear();

    expect((await recover({ since: between }).expect(202)).body).toEqual({ queued: 1, more: false });
    await t.runScheduler();
    const [resent] = await t.waitForDelivery({ userId });
    expect(resent.json()).toMatchObject({ title: 'late' });
    expect(t.receiver.requests).toHaveLength(1);
  });

  it("paces a large recovery behind live traffic: one user's 50 of the 100 that become due per second", async () => {
    await t.enableWebhook(userId, 'RATE_SPIKE', `/u${userId}`);
    const since = new Date(t.clock.now()).toISOString();
    await failAll(Array.from({ length: 150 }, (_, i) => event('RATE_SPIKE', `bulk ${i}`)));
    t.receiver.clear();

    expect((await recover({ since }).expect(202)).body).toEqual({ queued: 150, more: false });
    const pending = () => pendingOf(userId);
    const dueNow = async () => (await pending()).filter((d) => d.nextAttemptAt! <= t.clock.now()).length;
    expect((await pending())[0].waitingReason).toContain('recovery: queued behind live traffic');
    expect(await dueNow()).toBe(50);
    t.advance(1_000);
    expect(await dueNow()).toBe(100);
    t.advance(1_000);
    expect(await dueNow()).toBe(150);
    for (let run = 0; run < 50 && (await pending()).length > 0; run++) await t.runScheduler();
    expect(new Set(t.receiver.requests.map((r) => r.eventId)).size).toBe(150);
  });

  /** `count` FAILED deliveries of the user written straight into the tables (no retry schedule to walk), updated now. */
  const seedFailed = async (as: number, count: number) => {
    const ids = Array.from({ length: count }, (_, i) => `rec-${as}-${i}`);
    const now = t.clock.now();
    await t.dataSource.query(
      `INSERT INTO webhook_events (id, user_id, type, body, created_at) VALUES ${ids.map(() => '(?, ?, ?, ?, ?)').join(', ')}`,
      ids.flatMap((id) => [id, as, 'RATE_SPIKE', '{}', now]),
    );
    await t.dataSource.query(
      'INSERT INTO webhook_deliveries (event_id, user_id, user_partition, type, status, attempt_count, created_at, updated_at) VALUES ' +
        ids.map(() => "(?, ?, ?, 'RATE_SPIKE', 'FAILED', 6, ?, ?)").join(', '),
      ids.flatMap((id) => [id, as, as % 256, now, now]),
    );
  };

  it("paces each user's recoveries on their own: one user's large recovery does not delay another's", async () => {
    const other = userId + 1000;
    const since = new Date(t.clock.now() - MINUTE).toISOString();
    await seedFailed(userId, 150);
    await seedFailed(other, 60);

    expect((await recover({ since }).expect(202)).body).toEqual({ queued: 150, more: false });
    expect((await recover({ since }, other).expect(202)).body).toEqual({ queued: 60, more: false });
    // The schedule is set as they are recovered: read it without moving the clock, so no poll attempts any of them first.
    const start = t.clock.now();
    const dueBy = async (as: number, seconds: number) =>
      (await pendingOf(as)).filter((d) => d.nextAttemptAt! <= start + seconds * 1_000).length;
    // 100 a second in all, at most 50 of them one user's: the second user starts at once beside the first, not behind it.
    expect(await dueBy(other, 0)).toBe(50);
    expect(await dueBy(userId, 0)).toBe(50);
    expect(await dueBy(other, 1)).toBe(60);
    expect(await dueBy(userId, 1)).toBe(100);
    expect(await dueBy(userId, 2)).toBe(150);
  });

  it.each([
    [{}, 'since', 'must be an ISO-8601 instant'],
    [{ since: 'yesterday' }, 'since', 'must be an ISO-8601 instant'],
    [{ since: '2026-11-20T10:00:00' }, 'since', 'must be an ISO-8601 instant'],
    [{ since: '2026-11-20T10:00:00Z', until: '2026-11-19T10:00:00Z' }, 'until', 'must not be before since'],
    [{ since: '2026-01-01T00:00:00Z', until: '2026-11-19T10:00:00Z' }, 'since', 'at most 90 days before until'],
    [{ since: '2999-01-01T00:00:00Z' }, 'since', 'must not be in the future'],
    [{ since: '2026-11-20T10:00:00Z', type: 'NOPE' }, 'type', 'must be a known event type'],
    [{ since: '2026-11-20T10:00:00Z', extra: 1 }, 'extra', ''],
  ])('refuses %j with 400 naming %s', async (body, field, message) => {
    const response = await recover(body).expect(400);
    expect(response.body.errors).toEqual(
      expect.arrayContaining([expect.objectContaining({ field, message: expect.stringContaining(message) })]),
    );
  });

  it('is rate limited per user: 2 calls a minute', async () => {
    const since = new Date(t.clock.now() - MINUTE).toISOString();
    await recover({ since }).expect(202);
    await recover({ since }).expect(202);
    const limited = await recover({ since }).expect(429);
    expect(limited.headers['retry-after']).toBeDefined();
    t.advance(MINUTE);
    await recover({ since }).expect(202);
  });

  it('answers 202 when retention deletes one of its deliveries between its read and its insert, queuing the others', async () => {
    await t.enableWebhook(userId, 'RATE_SPIKE', `/u${userId}`);
    const since = new Date(t.clock.now()).toISOString();
    await failAll([event('RATE_SPIKE', 'kept'), event('RATE_SPIKE', 'purged')]);
    const [gone] = await t.dataSource.getRepository(WebhookDelivery).findBy({ userId, status: DeliveryStatus.FAILED });
    let armed = true;
    // Retention's statements as the recover is about to insert: on a connection of their own on MySQL/MariaDB (on
    // SQLite's one connection transactions take turns, so they run inside the recover's, which then rolls them back).
    const retention = {
      beforeQuery: async ({ query, queryRunner }: { query: string; queryRunner: QueryRunner }) => {
        if (!armed || !query.startsWith('INSERT INTO webhook_deliveries ')) return;
        armed = false;
        const run = (sql: string) => (kind.name === 'sqlite' ? queryRunner.query(sql, [gone.id]) : t.dataSource.query(sql, [gone.id]));
        await run('DELETE FROM webhook_delivery_attempts WHERE delivery_id = ?');
        await run('DELETE FROM webhook_deliveries WHERE id = ?');
        await (kind.name === 'sqlite' ? queryRunner : t.dataSource).query('DELETE FROM webhook_events WHERE id = ?', [gone.eventId]);
      },
    };
    t.dataSource.subscribers.push(retention as EntitySubscriberInterface);
    try {
      const { body } = await recover({ since }).expect(202);
      const failed = await t.dataSource.getRepository(WebhookDelivery).findBy({ userId, status: DeliveryStatus.FAILED });
      expect(armed).toBe(false);
      expect(body).toEqual({ queued: failed.length, more: false });
      expect(await pendingOf(userId)).toHaveLength(failed.length);
    } finally {
      t.dataSource.subscribers.splice(t.dataSource.subscribers.indexOf(retention as EntitySubscriberInterface), 1);
    }
  });
});

describeEachDatabase('a recovery larger than one call on $name', (kind) => {
  const t = appWithKitPerSuite(kind);

  it(`queues at most ${RECOVER_LIMIT} per call and says there is more; the next call queues the rest`, async () => {
    const userId = 77;
    const failedAt = t.clock.now() - MINUTE;
    const ids = Array.from({ length: RECOVER_LIMIT + 1 }, () => randomUUID());
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const common = { userId, type: EventType.RATE_SPIKE, createdAt: failedAt - MINUTE };
      await t.dataSource.getRepository(WebhookEvent).insert(chunk.map((id) => ({ id, body: '{}', ...common })));
      await t.dataSource.getRepository(WebhookDelivery).insert(
        chunk.map((eventId) => ({
          eventId,
          partition: partitionOf(userId),
          status: DeliveryStatus.FAILED,
          attemptCount: 6,
          updatedAt: failedAt,
          ...common,
        })),
      );
    }
    const recover = () =>
      t
        .http()
        .post(RECOVER)
        .set('Authorization', t.bearer(userId))
        .send({ since: new Date(failedAt - MINUTE).toISOString() })
        .expect(202);

    expect((await recover()).body).toEqual({ queued: RECOVER_LIMIT, more: true });
    expect((await recover()).body).toEqual({ queued: 1, more: false });
    expect(await t.dataSource.getRepository(WebhookDelivery).countBy({ userId, status: DeliveryStatus.PENDING })).toBe(RECOVER_LIMIT + 1);
  });
});
