import { EventType } from '../catalog/event-catalog';
import { applyObservations, type HealthObservation, NO_HEALTH_FACTS, observe, storedState } from './health-transitions';

const key = { userId: 7, type: EventType.RATE_SPIKE };
const fail = (at: number, statusCode: number | null = 503): HealthObservation => ({
  kind: 'attempt',
  at,
  outcome: statusCode === null ? 'timeout' : 'http_error',
  statusCode,
  error: statusCode === null ? 'timed out after 5000 ms' : `HTTP ${statusCode}`,
});
const ok = (at: number): HealthObservation => ({ kind: 'attempt', at, outcome: 'success', statusCode: 204, error: null });
const skipped = (at: number, until: number): HealthObservation => ({ kind: 'circuit_open', at, until });
const changesOf = (observations: HealthObservation[], failingAfter = 3, facts = NO_HEALTH_FACTS) =>
  applyObservations(key, facts, observations, failingAfter).changes.map(({ change, from, to }) => `${change}: ${from} → ${to}`);

describe('webhook health transitions', () => {
  it('becomes failing at the threshold, once, with the count, since and last status', () => {
    const { facts, changes } = applyObservations(key, NO_HEALTH_FACTS, [fail(100), fail(200, 500), fail(300, 502), fail(400)], 3);
    expect(changes).toEqual([
      {
        ...key,
        change: 'became_failing',
        from: 'HEALTHY',
        to: 'FAILING',
        at: 300,
        failedAttemptsInRow: 3,
        failingSince: 100,
        circuitOpenUntil: null,
        lastStatusCode: 502,
        lastError: 'HTTP 502',
      },
    ]);
    expect(facts).toMatchObject({ failedAttemptsInRow: 4, failingSince: 100, lastAttemptAt: 400, lastStatusCode: 503 });
  });

  it('recovers on the first 2xx after failing, and a later 2xx changes nothing', () => {
    expect(changesOf([fail(1), fail(2), fail(3), ok(4), ok(5)])).toEqual([
      'became_failing: HEALTHY → FAILING',
      'recovered: FAILING → HEALTHY',
    ]);
    const { facts } = applyObservations(key, NO_HEALTH_FACTS, [fail(1), fail(2), ok(4)], 3);
    expect(facts).toMatchObject({ failedAttemptsInRow: 0, failingSince: null, lastSuccessAt: 4, lastOutcome: 'success', lastError: null });
  });

  it('orders a batch by time: observations recorded out of order give the same result', () => {
    expect(changesOf([ok(4), fail(3), fail(1), fail(2)])).toEqual(['became_failing: HEALTHY → FAILING', 'recovered: FAILING → HEALTHY']);
  });

  it('ignores observations older than the last 2xx: another instance recording late cannot make it failing again', () => {
    const recovered = applyObservations(key, NO_HEALTH_FACTS, [fail(1), fail(2), fail(3), ok(10)], 3).facts;
    const late = applyObservations(key, recovered, [fail(4), fail(5), fail(6), skipped(7, 100)], 3);
    expect(late.changes).toEqual([]);
    expect(late.facts).toEqual(recovered);
  });

  it('keeps the newest attempt as the last one when an older failure is recorded after it', () => {
    const facts = observe(observe(NO_HEALTH_FACTS, fail(20, 500)), fail(10, 404));
    expect(facts).toMatchObject({ failedAttemptsInRow: 2, failingSince: 10, lastAttemptAt: 20, lastStatusCode: 500 });
  });

  it('does not count skipped attempts as failures: they open the circuit until the latest time given; a 2xx closes it', () => {
    const { facts, changes } = applyObservations(key, NO_HEALTH_FACTS, [fail(1, null), skipped(2, 500), skipped(3, 400)], 3);
    expect(changes.map((c) => [c.change, c.circuitOpenUntil])).toEqual([['circuit_opened', 500]]);
    expect(facts).toMatchObject({ failedAttemptsInRow: 1, circuitOpenUntil: 500 });
    expect(storedState(facts, 3)).toBe('CIRCUIT_OPEN');
    const probe = applyObservations(key, facts, [fail(600, null), skipped(601, 1200), ok(1300)], 3);
    expect(probe.changes.map(({ change, from, to }) => `${change}: ${from} → ${to}`)).toEqual(['circuit_closed: CIRCUIT_OPEN → HEALTHY']);
    expect(probe.facts).toMatchObject({ circuitOpenUntil: null, failedAttemptsInRow: 0 });
  });

  it('opens the circuit from failing too', () => {
    expect(changesOf([fail(1), fail(2), fail(3), skipped(4, 50)])).toEqual([
      'became_failing: HEALTHY → FAILING',
      'circuit_opened: FAILING → CIRCUIT_OPEN',
    ]);
  });

  it('reports auto-disable from the state it was in, and remembers when', () => {
    const { facts, changes } = applyObservations(key, NO_HEALTH_FACTS, [fail(1), fail(2), fail(3), { kind: 'disabled', at: 9 }], 3);
    expect(changes.map(({ change, from, to }) => `${change}: ${from} → ${to}`)).toEqual([
      'became_failing: HEALTHY → FAILING',
      'disabled: FAILING → DISABLED',
    ]);
    expect(facts.disabledAt).toBe(9);
  });

  it('bounds the stored error', () => {
    const long: HealthObservation = { kind: 'attempt', at: 1, outcome: 'connect_error', statusCode: null, error: 'x'.repeat(600) };
    expect(observe(NO_HEALTH_FACTS, long).lastError).toHaveLength(255);
  });

  it('follows the configured threshold', () => {
    expect(changesOf([fail(1)], 1)).toEqual(['became_failing: HEALTHY → FAILING']);
    expect(changesOf([fail(1), fail(2), fail(3)], 5)).toEqual([]);
  });
});
