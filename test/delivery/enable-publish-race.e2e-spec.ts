import { EventType, type PublishableEvent, Severity } from '@funding/notification-webhooks';
import type { ReceivedRequest } from '@funding/notification-webhooks/testing';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';
import { DELIVERIES, SETTINGS } from '../support/settings-api';

// Each round enables WEBHOOK for a new user (twice at once) while events of that type are being published;
// in even rounds the webhook was first saved disabled, without a secret. Before enabling was atomic, about
// half of the rounds on MariaDB delivered events without signature headers.
const ROUNDS = 30;
const PUBLISH_LOOPS = 4;
const TYPE = EventType.RATE_SPIKE;

describeEachDatabase('first WEBHOOK enable while events are published on $name', (kind) => {
  const t = appWithKitPerSuite(kind);

  const save = (userId: number, path: string, enabled: boolean) =>
    t
      .http()
      .put(SETTINGS)
      .set('Authorization', t.bearer(userId))
      .send({ type: TYPE, channel: 'WEBHOOK', enabled, webhookUrl: t.receiver.url(path) });
  const enable = (userId: number, path: string) => save(userId, path, true);
  const event = (userId: number): PublishableEvent => ({
    userId,
    type: TYPE,
    severity: Severity.INFO,
    title: 'Rate spike',
    body: 'USD FRR up',
    payload: {},
  });

  it('signs every delivery with the secret the enable returned, and returns that secret to one of two concurrent enables', async () => {
    const problems: string[] = [];
    let published = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      const userId = 1000 + round;
      const path = `/race${round}`;
      if (round % 2 === 0)
        expect((await save(userId, path, false).expect(200)).body).toMatchObject({ enabled: false, hasWebhookSecret: false });
      let enabling = true;
      // Publishes of the type, one after another, until both enables have answered (at least one each).
      const publishLoop = async () => {
        let queued = 0;
        do {
          queued += (await t.publisher.publish(event(userId))).queuedDeliveries;
          published++;
        } while (enabling);
        return queued;
      };
      const loops = Array.from({ length: PUBLISH_LOOPS }, publishLoop);
      const enables = Promise.all([enable(userId, path), enable(userId, path)]).finally(() => (enabling = false));
      const [responses, queuedPerLoop] = await Promise.all([enables, Promise.all(loops)]);
      await t.settle();

      expect(responses.map((response) => response.status)).toEqual([200, 200]);
      const secrets = responses
        .map((response) => response.body.webhookSecret as string | undefined)
        .filter((secret) => secret !== undefined);
      expect(secrets, `round ${round}: the first enable reveals the secret exactly once`).toHaveLength(1);
      const [secret] = secrets;

      const queued = queuedPerLoop.reduce((sum, n) => sum + n, 0);
      const received = t.receiver.requests.filter((request) => request.path === path);
      const unsigned = received.filter(
        (request) => request.headers['x-service-signature'] === undefined || request.headers['x-service-timestamp'] === undefined,
      );
      const badlySigned = received.filter((request) => !unsigned.includes(request) && !request.isSignedWith(secret));
      if (unsigned.length > 0 || badlySigned.length > 0 || received.length !== queued) {
        problems.push(
          `round ${round}: ${queued} queued, ${received.length} received, ${unsigned.length} unsigned, ${badlySigned.length} with another signature`,
        );
      }
    }
    expect(problems, `${published} events published in ${ROUNDS} rounds`).toEqual([]);
  });

  it('never sends a delivery unsigned when an enabled webhook has lost its signing secret', async () => {
    const userId = 5000;
    const path = `/lost-secret`;
    await enable(userId, path).expect(200);
    // A state enabling can no longer produce (the enable is atomic), e.g. a partially restored database.
    await t.dataSource.query(
      'DELETE FROM webhook_signing_secrets WHERE preference_id IN (SELECT id FROM notification_preferences WHERE user_id = ? AND type = ?)',
      [userId, TYPE],
    );
    expect((await t.publisher.publish(event(userId))).queuedDeliveries).toBe(1);
    await t.settle();

    const sent: ReceivedRequest[] = t.receiver.requests.filter((request) => request.path === path);
    expect(sent.map((request) => request.describe())).toEqual([]);
    const log = await t.http().get(`${DELIVERIES}`).set('Authorization', t.bearer(userId)).expect(200);
    expect(log.body.data).toEqual([
      expect.objectContaining({ status: 'PENDING', attemptCount: 1, lastError: expect.stringContaining('no signing secret') }),
    ]);
  });
});
