import type { EventType } from '../../catalog/event-catalog';
import type { KeptCircuit } from '../partitions/kept-circuit';
import { partitionOf } from '../partitions/partitions';
import { EndpointQueues, endpointKeyOf, type QueuedAttempt } from './endpoint-queues';

interface Attempt extends QueuedAttempt {
  readonly n: number;
}

const limits = { concurrency: 4, perEndpoint: 2, heldPerEndpoint: 8, held: 16, circuitBreaker: { failuresToOpen: 3, coolDownMs: 30_000 } };
const T = 1_800_000_000_000;
let seq = 0;
const attempt = (userId: number, host = 'hooks.example.com', type = 'RATE_SPIKE'): Attempt => ({
  endpoint: endpointKeyOf(userId, `https://${host}/hook/${type}`),
  userId,
  type: type as EventType,
  n: seq++,
});
const startAll = (queues: EndpointQueues<Attempt>, now = T): Attempt[] => {
  const started: Attempt[] = [];
  for (let next = queues.next(now); next; next = queues.next(now)) started.push(next);
  return started;
};

describe('endpointKeyOf', () => {
  it('is one user on one host: paths and event types of that host share it, other users and hosts do not', () => {
    expect(endpointKeyOf(1, 'https://dead.example.com/a')).toBe(endpointKeyOf(1, 'https://DEAD.example.com:443/b?x=1'));
    expect(endpointKeyOf(1, 'https://dead.example.com/a')).not.toBe(endpointKeyOf(2, 'https://dead.example.com/a'));
    expect(endpointKeyOf(1, 'https://dead.example.com/a')).not.toBe(endpointKeyOf(1, 'https://dead.example.com:8443/a'));
  });
});

describe('EndpointQueues', () => {
  it('never starts more than the per-endpoint cap for one endpoint, and gives the other slots to other endpoints', () => {
    const queues = new EndpointQueues<Attempt>(limits);
    for (let i = 0; i < 8; i++) queues.push(attempt(1));
    queues.push(attempt(2));
    queues.push(attempt(3));
    const started = startAll(queues);
    expect(started.map((a) => a.userId).sort()).toEqual([1, 1, 2, 3]);
  });

  it('serves endpoints round-robin: a late endpoint starts before an early one’s backlog', () => {
    const queues = new EndpointQueues<Attempt>({ ...limits, concurrency: 1, perEndpoint: 1 });
    const backlog = [attempt(1), attempt(1), attempt(1)];
    backlog.forEach((a) => queues.push(a));
    const late = attempt(2);
    queues.push(late);
    const [first] = startAll(queues);
    expect(first.userId).toBe(1);
    queues.finished(first, 'success', T);
    const [second] = startAll(queues);
    expect(second).toBe(late);
  });

  it('spreading event types over paths of one host does not escape the cap', () => {
    const queues = new EndpointQueues<Attempt>(limits);
    for (const type of ['RATE_SPIKE', 'RATE_DROP', 'LOAN_EXECUTED', 'STALE_OFFER']) queues.push(attempt(1, 'dead.example.com', type));
    expect(startAll(queues)).toHaveLength(2);
  });

  it('sends the endpoint’s share to the outbox once it holds heldPerEndpoint, and counts attempts about to be added', () => {
    const queues = new EndpointQueues<Attempt>(limits);
    const key = attempt(1).endpoint;
    expect(queues.admission(key, T, 7)).toBe('hold');
    expect(queues.admission(key, T, 8)).toBe('outbox');
    for (let i = 0; i < 8; i++) queues.push(attempt(1));
    expect(queues.admission(key, T)).toBe('outbox');
    expect(queues.heldByUser()).toEqual(new Map([[1, 8]]));
    expect(queues.admission(attempt(2).endpoint, T)).toBe('hold');
  });

  it('opens the circuit after failuresToOpen unreachable attempts in a row, parks the queue, and lets one probe through after the cool-down', () => {
    const queues = new EndpointQueues<Attempt>(limits);
    for (let i = 0; i < 6; i++) queues.push(attempt(1));
    const first = startAll(queues);
    expect(first).toHaveLength(2);
    expect(queues.finished(first[0], 'timeout', T + 5000)).toBeNull();
    expect(queues.finished(first[1], 'connect_error', T + 5000)).toBeNull();
    const [third, fourth] = startAll(queues, T + 5000);
    const opened = queues.finished(third, 'timeout', T + 10_000);
    expect(opened).toMatchObject({ userId: 1, types: ['RATE_SPIKE'], until: T + 40_000 });
    expect(opened!.parked).toHaveLength(2);
    expect(opened!.reason).toContain('next try at 2027-01-15T08:00:40.000Z');
    expect(queues.openCircuits(T + 10_000)).toBe(1);
    expect(queues.held).toBe(1); // the fourth attempt was already in flight
    expect(queues.finished(fourth, 'timeout', T + 15_000)).toBeNull(); // in flight when it opened: does not extend it
    expect(queues.admission(third.endpoint, T + 15_000)).toMatchObject({ parkUntil: T + 40_000 });

    const key = third.endpoint;
    expect(queues.admission(key, T + 39_999)).toMatchObject({ parkUntil: T + 40_000 });
    expect(queues.admission(key, T + 40_000)).toBe('hold');
    queues.push(attempt(1));
    queues.push(attempt(1));
    expect(startAll(queues, T + 40_000)).toHaveLength(1); // half-open: one probe
  });

  it('doubles the cool-down after a failed probe and closes the circuit on any answer', () => {
    const queues = new EndpointQueues<Attempt>({ ...limits, circuitBreaker: { failuresToOpen: 1, coolDownMs: 1000 } });
    queues.push(attempt(1));
    const [a] = startAll(queues);
    expect(queues.finished(a, 'timeout', T)!.until).toBe(T + 1000);
    queues.push(attempt(1));
    const [probe] = startAll(queues, T + 1000);
    expect(queues.finished(probe, 'tls_error', T + 1000)!.until).toBe(T + 3000);
    queues.push(attempt(1));
    const [probe2] = startAll(queues, T + 3000);
    expect(queues.finished(probe2, 'http_error', T + 3000)).toBeNull(); // a 500 is an answer: the endpoint is reachable
    expect(queues.openCircuits(T + 10_000)).toBe(0);
    for (let i = 0; i < 3; i++) queues.push(attempt(1));
    expect(startAll(queues, T + 3000)).toHaveLength(2);
  });

  it('doubles the cool-down after each failed probe up to 16 times the configured one, then keeps it there', () => {
    const queues = new EndpointQueues<Attempt>({ ...limits, circuitBreaker: { failuresToOpen: 1, coolDownMs: 1000 } });
    queues.push(attempt(1));
    const [first] = startAll(queues);
    let now = T;
    const coolDowns: number[] = [];
    for (let until = queues.finished(first, 'timeout', now)!.until; coolDowns.length < 6;) {
      coolDowns.push(until - now);
      now = until;
      queues.push(attempt(1));
      const [probe] = startAll(queues, now);
      until = queues.finished(probe, 'timeout', now)!.until;
    }
    expect(coolDowns).toEqual([1000, 2000, 4000, 8000, 16_000, 16_000]);
  });

  it('never opens the circuit with failuresToOpen 0, and never for answers or blocked addresses', () => {
    const never = new EndpointQueues<Attempt>({ ...limits, circuitBreaker: { failuresToOpen: 0, coolDownMs: 1000 } });
    const sometimes = new EndpointQueues<Attempt>({ ...limits, circuitBreaker: { failuresToOpen: 1, coolDownMs: 1000 } });
    for (let i = 0; i < 3; i++) never.push(attempt(1));
    for (const a of startAll(never)) expect(never.finished(a, 'timeout', T)).toBeNull();
    sometimes.push(attempt(1));
    sometimes.push(attempt(1));
    const [x, y] = startAll(sometimes);
    expect(sometimes.finished(x, 'http_error', T)).toBeNull();
    expect(sometimes.finished(y, 'blocked', T)).toBeNull();
  });

  it('hands over the queued attempts of users whose partition moved, and forgets their circuits once idle', () => {
    const queues = new EndpointQueues<Attempt>({ ...limits, perEndpoint: 1, circuitBreaker: { failuresToOpen: 1, coolDownMs: 1000 } });
    const [mine, moved, movedQueued] = [attempt(1), attempt(2), attempt(2)];
    for (const a of [mine, moved, movedQueued]) queues.push(a);
    expect(startAll(queues)).toEqual([mine, moved]);
    queues.finished(mine, 'timeout', T); // user 1's circuit opens
    expect(queues.handOver((userId) => userId === 2)).toEqual([movedQueued]);
    expect(queues.held).toBe(1); // user 2's attempt in flight
    queues.finished(moved, 'timeout', T); // its circuit opens here, in flight when the partition moved
    expect(queues.handOver((userId) => userId !== 3)).toEqual([]);
    expect(queues.admission(moved.endpoint, T)).toBe('hold'); // forgotten: the new owner's circuit decides
    expect(queues.admission(mine.endpoint, T)).toBe('hold');
    expect(queues.openCircuits(T)).toBe(0);
    expect(queues.held).toBe(0);
  });

  it('counts no failure learned after its partition lease ended, and still hears answers', () => {
    const queues = new EndpointQueues<Attempt>({ ...limits, circuitBreaker: { failuresToOpen: 1, coolDownMs: 30_000 } });
    const late = [attempt(1, 'hooks.example'), attempt(1, 'hooks.example')];
    for (const a of late) queues.push(a);
    startAll(queues);
    // The process was paused past its lease: the new owner got answers meanwhile, and decides.
    expect(queues.finished(late[0], 'timeout', T, false)).toBeNull();
    expect(queues.admission(late[0].endpoint, T)).toBe('hold');
    const opening = attempt(1, 'hooks.example');
    queues.push(opening);
    startAll(queues);
    expect(queues.finished(opening, 'timeout', T)).not.toBeNull(); // owned again: a failure opens it
    queues.finished(late[1], 'success', T + 1_000, false); // an answer, learned late, still closes it here
    expect(queues.admission(late[1].endpoint, T + 1_000)).toBe('hold');
  });

  it('remembers an answer learned after its partition lease ended: taking the partition back keeps it over an older opening', () => {
    const queues = new EndpointQueues<Attempt>(limits);
    const late = attempt(1, 'hooks.example');
    queues.push(late);
    startAll(queues);
    queues.handOver((userId) => userId === 1); // the lease ended (a pause) with the attempt in flight
    queues.finished(late, 'success', T + 1_000, false);
    // Meanwhile another owner, its own network down, opened the endpoint's circuit and kept it.
    const open = { failures: 3, openUntil: T + 60_000, coolDownMs: 30_000, lastFailureAt: T };
    queues.inherit([{ userId: 1, host: 'hooks.example', state: open, forgetAfter: T + 1_000_000 }], new Set([partitionOf(1)]), T + 2_000);
    expect(queues.admission(late.endpoint, T + 2_000)).toBe('hold');
  });

  it('dates an answer learned late at its request: an opening kept after the request left is newer, and is inherited', () => {
    const queues = new EndpointQueues<Attempt>(limits);
    const late = attempt(1, 'hooks.example');
    queues.push(late);
    startAll(queues);
    queues.handOver((userId) => userId === 1); // the process was paused with the request in flight
    queues.finished(late, 'success', T + 60_000, false, T); // sent at T, its answer read a minute later, as it woke
    // Meanwhile another owner saw the endpoint fail 40 s after that request left, opened its circuit and kept it.
    const open = { failures: 2, openUntil: T + 70_000, coolDownMs: 30_000, lastFailureAt: T + 40_000 };
    queues.inherit([{ userId: 1, host: 'hooks.example', state: open, forgetAfter: T + 1_000_000 }], new Set([partitionOf(1)]), T + 61_000);
    expect(queues.admission(late.endpoint, T + 61_000)).toMatchObject({ parkUntil: T + 70_000 });
  });

  it('dates an answer learned late at its write: a request written after a kept opening answers over it', () => {
    const queues = new EndpointQueues<Attempt>(limits);
    const late = attempt(1, 'hooks.example');
    queues.push(late);
    startAll(queues);
    queues.handOver((userId) => userId === 1); // paused before the request left: its partition lease ended meanwhile
    queues.finished(late, 'success', T + 72_000, false, T + 70_000); // written as the process woke, answered 2 s later
    const open = { failures: 2, openUntil: T + 90_000, coolDownMs: 30_000, lastFailureAt: T + 60_000 };
    queues.inherit([{ userId: 1, host: 'hooks.example', state: open, forgetAfter: T + 1_000_000 }], new Set([partitionOf(1)]), T + 73_000);
    expect(queues.admission(late.endpoint, T + 73_000)).toBe('hold'); // it answered after that opening: no skip
  });

  it('tells what the next owner should know as a circuit opens, opens again, closes, and leaves with a partition still failing', () => {
    const kept: KeptCircuit[] = [];
    const queues = new EndpointQueues<Attempt>(limits, (circuit) => kept.push(circuit));
    const dead = Array.from({ length: 4 }, () => attempt(1, 'dead.example'));
    const failing = attempt(2, 'flaky.example');
    for (const a of [...dead, failing]) queues.push(a);
    startAll(queues);
    for (const a of dead.slice(0, 3)) queues.finished(a, 'timeout', T);
    queues.finished(failing, 'connect_error', T); // 1 of 3: nothing to tell yet
    expect(kept).toEqual([
      {
        userId: 1,
        host: 'dead.example',
        state: { failures: 3, openUntil: T + 30_000, coolDownMs: 30_000, lastFailureAt: T },
        forgetAfter: T + 30_000 * 17,
      },
    ]);
    queues.push(dead[3]);
    expect(startAll(queues, T + 30_000)).toEqual([dead[3]]); // the probe
    queues.finished(dead[3], 'timeout', T + 30_000); // opens again, for twice as long
    expect(kept[1].state).toEqual({ failures: 4, openUntil: T + 90_000, coolDownMs: 60_000, lastFailureAt: T + 30_000 });
    const probe = attempt(1, 'dead.example');
    queues.push(probe);
    expect(startAll(queues, T + 90_000)).toEqual([probe]);
    queues.finished(probe, 'http_error', T + 90_000); // an answer: closed, nothing to keep
    expect(kept[2]).toMatchObject({ userId: 1, host: 'dead.example', state: null });
    queues.handOver((userId) => userId === 2);
    expect(kept[3]).toEqual({
      userId: 2,
      host: 'flaky.example',
      state: { failures: 1, openUntil: null, coolDownMs: 0, lastFailureAt: T },
      forgetAfter: T + 30_000 * 16,
    });
    expect(kept).toHaveLength(4);
  });

  it('starts an endpoint it does not know from the circuit kept by the previous owner: open until its time, then one probe', () => {
    const queues = new EndpointQueues<Attempt>(limits);
    const state = { failures: 3, openUntil: T + 10_000, coolDownMs: 30_000, lastFailureAt: T - 20_000 };
    const reopening = queues.inherit(
      [
        { userId: 1, host: 'dead.example', state, forgetAfter: T + 1_000_000 },
        { userId: 2, host: 'stale.example', state: { ...state, openUntil: T - 1_000_000 }, forgetAfter: T - 1 },
        { userId: 3, host: 'failing.example', state: { ...state, openUntil: null, failures: 2 }, forgetAfter: T + 1_000_000 },
      ],
      new Set([1, 2, 3]),
      T,
    );
    expect(reopening).toBe(T + 10_000);
    const dead = attempt(1, 'dead.example');
    expect(queues.admission(dead.endpoint, T)).toMatchObject({ parkUntil: T + 10_000 });
    expect(queues.admission(attempt(2, 'stale.example').endpoint, T)).toBe('hold'); // stale: forgotten
    for (let i = 0; i < 3; i++) queues.push(attempt(1, 'dead.example'));
    expect(startAll(queues, T + 10_000)).toHaveLength(1); // half-open: one probe, not the cap of 2
    const failing = attempt(3, 'failing.example');
    queues.push(failing);
    expect(startAll(queues, T + 10_000)).toEqual([failing]);
    expect(queues.finished(failing, 'timeout', T + 10_000)).not.toBeNull(); // its third failure in a row opens it
  });

  it('takes what the previous owner kept over what it remembers of a partition taken back: open or closed', () => {
    const queues = new EndpointQueues<Attempt>({ ...limits, circuitBreaker: { failuresToOpen: 1, coolDownMs: 30_000 } });
    // This instance opened user 1's circuit; attempts to user 2 and 3 are in flight as it loses their partitions.
    queues.push(attempt(1, 'dead.example'));
    const [opening] = startAll(queues);
    expect(queues.finished(opening, 'timeout', T)).not.toBeNull();
    for (const userId of [2, 3]) queues.push(attempt(userId, 'up.example'));
    const inFlight = startAll(queues);
    // Another instance owned them meanwhile: it got an answer from user 1's endpoint (closed: no row kept) and opened user
    // 2's; it never saw user 3's endpoint fail, nor user 4's, whose partition this instance does not take.
    const open = { failures: 5, openUntil: T + 60_000, coolDownMs: 60_000, lastFailureAt: T };
    queues.inherit(
      [
        { userId: 2, host: 'up.example', state: open, forgetAfter: T + 1_000_000 },
        { userId: 4, host: 'other.example', state: open, forgetAfter: T + 1_000_000 },
      ],
      new Set([1, 2, 3]),
      T + 1_000,
    );
    expect(queues.admission(attempt(1, 'dead.example').endpoint, T + 1_000)).toBe('hold'); // closed, as its last owner left it
    expect(queues.admission(attempt(2, 'up.example').endpoint, T + 1_000)).toMatchObject({ parkUntil: T + 60_000 });
    expect(queues.admission(attempt(3, 'up.example').endpoint, T + 1_000)).toBe('hold');
    for (const a of inFlight) queues.finished(a, 'success', T + 1_000);
    expect(queues.inFlight).toBe(0);
  });

  it('withdraws, standing down, what failed here since its last answer, and leaves what failed before it or elsewhere', () => {
    const kept: KeptCircuit[] = [];
    const queues = new EndpointQueues<Attempt>({ ...limits, circuitBreaker: { failuresToOpen: 1, coolDownMs: 30_000 } }, (circuit) =>
      kept.push(circuit),
    );
    const fail = (userId: number, at: number) => {
      queues.push(attempt(userId, 'dead.example'));
      const [a] = startAll(queues, at);
      queues.finished(a, 'timeout', at);
    };
    fail(1, T); // opened while receivers still answered this instance
    fail(2, T + 10_000); // opened after its last answer (T + 5 s): maybe its own network
    // Opened by another instance after that answer: inherited, not seen here (seed 138105).
    const open = { failures: 3, openUntil: T + 60_000, coolDownMs: 30_000, lastFailureAt: T + 8_000 };
    queues.inherit([{ userId: 3, host: 'dead.example', state: open, forgetAfter: T + 1_000_000 }], new Set([partitionOf(3)]), T + 9_000);
    kept.length = 0;
    queues.handOver(() => true, T + 5_000);
    expect(kept).toEqual([{ userId: 2, host: 'dead.example', state: null, forgetAfter: 0 }]);
    expect(queues.known).toBe(0);
  });

  it('hands every queued attempt back on shutdown and forgets idle endpoints', () => {
    const queues = new EndpointQueues<Attempt>(limits);
    for (let i = 0; i < 5; i++) queues.push(attempt(1));
    const started = startAll(queues);
    expect(queues.takeQueued()).toHaveLength(3);
    for (const a of started) queues.finished(a, 'success', T);
    expect(queues.held).toBe(0);
    expect(queues.inFlight).toBe(0);
    expect(queues.room).toBe(16);
  });

  it('counts only circuits really open or probing, and forgets breakers whose state no longer matters', () => {
    const queues = new EndpointQueues<Attempt>({ ...limits, circuitBreaker: { failuresToOpen: 1, coolDownMs: 1000 } });
    for (let user = 1; user <= 50; user++) {
      queues.push(attempt(user, 'dead.example.com'));
      const [a] = startAll(queues);
      expect(queues.finished(a, 'timeout', T)).not.toBeNull();
    }
    queues.push(attempt(99, 'flaky.example.com'));
    const [flaky] = startAll(queues);
    expect(queues.finished(flaky, 'http_error', T)).toBeNull(); // an answer: pristine again
    expect(queues.openCircuits(T)).toBe(50);
    expect(queues.known).toBe(50);

    queues.push(attempt(1, 'dead.example.com'));
    const [probe] = startAll(queues, T + 1000);
    expect(queues.openCircuits(T + 1000)).toBe(1); // the probe in flight; the other cool-downs are over with nothing to probe
    expect(queues.finished(probe, 'timeout', T + 1000)!.until).toBe(T + 3000);
    expect(queues.openCircuits(T + 1000)).toBe(1);

    const later = T + 16 * 1000 * 2 + 3000;
    expect(queues.openCircuits(later)).toBe(0);
    expect(queues.known).toBe(0); // nothing held, nothing worth remembering: memory bounded by live endpoints
  });
});
