import type { EntitySubscriberInterface, QueryRunner } from 'typeorm';
import { EventType, Severity } from '@funding/notification-webhooks';
import { WebhookDelivery } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import { WebhookEvent } from '../../src/notifications/delivery/entities/webhook-event.entity';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';

// A commit whose answer is lost (the connection reset right after COMMIT): the caller sees an error, the rows are stored.
describeEachDatabase('a publish whose commit answered an error on $name', (kind) => {
  const t = appWithKitPerSuite(kind);

  /** Fails the answer of the next transaction that inserts events, after its COMMIT. */
  const loseNextEventCommitAnswer = () => {
    let inserting: QueryRunner | undefined;
    let lost = false;
    const subscriber: EntitySubscriberInterface = {
      beforeQuery: ({ query, queryRunner }) => {
        if (!lost && query.startsWith('INSERT INTO webhook_events ')) inserting = queryRunner;
      },
      afterTransactionCommit: ({ queryRunner }) => {
        if (lost || queryRunner !== inserting) return;
        lost = true;
        throw new Error('Connection lost: the server closed the connection (after COMMIT)');
      },
    };
    t.dataSource.subscribers.push(subscriber);
    return {
      get lost() {
        return lost;
      },
      remove: () => t.dataSource.subscribers.splice(t.dataSource.subscribers.indexOf(subscriber), 1),
    };
  };

  it('answers the ids of a group that committed (its calls tried again one by one find their events stored), and delivers each once', async () => {
    const userId = 1;
    await t.enableWebhook(userId, 'LOAN_EXECUTED');
    const event = (title: string) => ({ userId, type: EventType.LOAN_EXECUTED, severity: Severity.INFO, title, body: '1000 USD' });
    const fault = loseNextEventCommitAnswer();
    let published;
    try {
      // One group (both calls arrive in one turn): its commit answers an error, so each call is committed again alone.
      published = await Promise.all([t.publisher.publish(event('first')), t.publisher.publish(event('second'))]);
    } finally {
      fault.remove();
    }
    expect(fault.lost).toBe(true);
    const eventIds = published.flatMap((result) => result.eventIds);
    expect(published.map((result) => result.queuedDeliveries)).toEqual([1, 1]);
    expect(await t.dataSource.getRepository(WebhookEvent).countBy(eventIds.map((id) => ({ id })))).toBe(2);
    expect(await t.dataSource.getRepository(WebhookDelivery).countBy({ userId })).toBe(2);

    // Leased by the try whose answer was lost: claimed and sent once that lease has ended.
    t.advance(61_000);
    await t.runScheduler();
    const sent = await t.waitForDelivery({ userId, count: 2 });
    expect(sent.map((request) => request.eventId).sort()).toEqual([...eventIds].sort());
  });
});
