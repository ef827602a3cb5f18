import { RETRY_DELAYS_MS } from '../../src/notifications/delivery/retry-policy';
import { appWithKitPerSuite, describeEachDatabase } from '../support/each-database';

const event = (userId: number, title: string) => ({ userId, type: 'RATE_SPIKE', severity: 'WARNING', title, body: 'USD FRR 0.08%' });
const SCHEDULE_MS = RETRY_DELAYS_MS.reduce((sum, delay) => sum + delay, 0);
const SCHEDULER_INTERVAL_MS = 60_000;

describeEachDatabase('a dead endpoint whose circuit is open, on $name', (kind) => {
  const t = appWithKitPerSuite(kind, {
    delivery: {
      concurrency: 4,
      perEndpointConcurrency: 1,
      timeoutMs: 200,
      leaseMs: 20_000,
      circuitBreaker: { failuresToOpen: 1, coolDownMs: 600_000 },
    },
  });

  it('keeps every delivery on the spec schedule: an attempt due while the circuit is open is skipped and counts, FAILED after the 6th', async () => {
    await t.enableWebhook(1, 'RATE_SPIKE', '/dead');
    t.receiver.respondWith('hang', { path: '/dead' });
    await t.publish({ events: [event(1, 'a'), event(1, 'b'), event(1, 'c')] }).expect(202);
    await t.settle();

    // Walk the clock from one due time to the next, as the scheduler would pick them up.
    for (let step = 0; step < 100; step++) {
      const [{ next }] = await t.dataSource.query(`SELECT MIN(next_attempt_at) AS next FROM webhook_deliveries WHERE status = 'PENDING'`);
      if (next === null) break;
      t.advance(Math.max(0, Number(next) - t.clock.now()));
      await t.runScheduler();
    }

    const deliveries: { id: number; status: string; attempt_count: number; created_at: number; updated_at: number }[] =
      await t.dataSource.query('SELECT id, status, attempt_count, created_at, updated_at FROM webhook_deliveries ORDER BY id');
    expect(deliveries.map((delivery) => delivery.status)).toEqual(['FAILED', 'FAILED', 'FAILED']);
    for (const delivery of deliveries) {
      expect(Number(delivery.attempt_count)).toBe(6);
      expect(Number(delivery.updated_at)).toBeLessThanOrEqual(Number(delivery.created_at) + SCHEDULE_MS + SCHEDULER_INTERVAL_MS);
      const attempts: { attempt_number: number; outcome: string; status_code: number | null; duration_ms: number; error: string | null }[] =
        await t.dataSource.query(
          'SELECT attempt_number, outcome, status_code, duration_ms, error FROM webhook_delivery_attempts WHERE delivery_id = ? ORDER BY attempt_number',
          [delivery.id],
        );
      expect(attempts.map((attempt) => Number(attempt.attempt_number))).toEqual([1, 2, 3, 4, 5, 6]);
      for (const skipped of attempts.filter((attempt) => attempt.outcome === 'circuit_open')) {
        expect(skipped).toMatchObject({ status_code: null });
        expect(Number(skipped.duration_ms)).toBe(0);
        expect(skipped.error).toMatch(/^circuit open for 127\.0\.0\.1:\d+ until \d{4}-\d\d-\d\dT/);
      }
    }
    const outcomes = (await t.dataSource.query('SELECT outcome FROM webhook_delivery_attempts')).map(
      (row: { outcome: string }) => row.outcome,
    );
    expect(outcomes).toContain('circuit_open');
    expect(t.receiver.requests.length).toBeLessThan(18); // most attempts were skipped without a request
  });
});
