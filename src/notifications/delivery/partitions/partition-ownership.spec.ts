import { InMemoryPartitionLeases } from '../../../../test/simulation/in-memory-partition-leases';
import { Clock, type ClockTimer } from '../../clock/clock';
import { deliverySettings } from '../delivery-settings';
import {
  PARTITION_MIN_HOLD_MS,
  PARTITION_RENEW_MS,
  PartitionOwnership,
  partitionLeaseMs,
  type PartitionListener,
} from './partition-ownership';
import { PARTITION_COUNT, partitionOf, preferredHolder } from './partitions';

/** A clock each test moves by hand; its interval never fires (each test runs the rounds itself), its timeouts when told. */
class HandClock extends Clock {
  readonly timeouts: { readonly run: () => void; readonly at: number }[] = [];
  /** How far the monotonic clock is from the wall clock: a step of the wall clock alone changes it. */
  monotonicOffset = 0;
  constructor(public current = 1_000_000) {
    super();
  }
  now(): number {
    return this.current;
  }
  override monotonic(): number {
    return this.current + this.monotonicOffset;
  }
  override setInterval(): ClockTimer {
    return { cancel: () => undefined };
  }
  override setTimeout(run: () => void, ms: number): ClockTimer {
    const timeout = { run, at: this.current + ms };
    this.timeouts.push(timeout);
    return { cancel: () => this.timeouts.splice(this.timeouts.indexOf(timeout), 1) };
  }
  /** Runs the timeouts armed so far. */
  fire(): void {
    for (const { run } of this.timeouts.splice(0)) run();
  }
  /** Moves to `at` and runs the timeouts due by then. */
  advanceTo(at: number): void {
    this.current = at;
    const due = this.timeouts.filter((timeout) => timeout.at <= at);
    for (const timeout of due) this.timeouts.splice(this.timeouts.indexOf(timeout), 1);
    for (const { run } of due) run();
  }
}

const settings = deliverySettings({ encryptionKeys: [] } as never);
const LEASE_MS = partitionLeaseMs(settings);
const ATTEMPT_MS = settings.timeoutMs + 7_000;

/** An instance's ownership and what its engine was told. */
function instance(leases: InMemoryPartitionLeases, clock: Clock, name: string, inFlight = new Map<number, number>()) {
  const lost: number[] = [];
  let gained = 0;
  const listener: PartitionListener = {
    inFlight: (partition) => inFlight.get(partition) ?? 0,
    lost: (partitions) => lost.push(...partitions),
    gained: () => gained++,
    inherited: () => undefined,
  };
  const ownership = new PartitionOwnership(leases, clock, settings, name);
  return { ownership, lost, inFlight, gained: () => gained, start: () => ownership.start(listener) };
}

/** Takes that commit and answer an error (a connection reset after COMMIT) while `lost` is true. */
function loseTakeAnswers(leases: InMemoryPartitionLeases): { lost: boolean } {
  const answers = { lost: true };
  const take = leases.take.bind(leases);
  leases.take = async (...args) => {
    const taken = await take(...args);
    if (answers.lost) throw new Error('connection reset after COMMIT');
    return taken;
  };
  return answers;
}

/** The partitions whose lease `holder` holds, as the table says. */
function heldBy(leases: InMemoryPartitionLeases, holder: string): number[] {
  return [...leases.partitions].filter(([, row]) => row.holder === holder).map(([partition]) => partition);
}

describe('PartitionOwnership', () => {
  let clock: HandClock;
  let leases: InMemoryPartitionLeases;
  beforeEach(() => {
    clock = new HandClock();
    leases = new InMemoryPartitionLeases();
  });

  it('owns every partition alone, and covers an attempt only while the lease, counted from the take, outlasts it', async () => {
    const a = instance(leases, clock, 'a');
    await a.start();
    expect(heldBy(leases, 'a')).toHaveLength(PARTITION_COUNT);
    expect(a.ownership.count).toBe(PARTITION_COUNT);
    expect(a.gained()).toBe(1);
    expect(a.ownership.covers(7, clock.now() + LEASE_MS - 1)).toBe(true);
    expect(a.ownership.covers(7, clock.now() + LEASE_MS)).toBe(false);
    clock.current += LEASE_MS - ATTEMPT_MS; // no renewal got through (a pause, a database outage)
    expect(a.ownership.covers(7, clock.now() + ATTEMPT_MS)).toBe(false);
    expect(a.ownership.holds(7, clock.now())).toBe(true); // an attempt ending now still counts for its circuit
    expect(a.ownership.holds(7, clock.now() + ATTEMPT_MS)).toBe(false); // what it learns past the lease does not
  });

  it('ends a lease with the first of its two clocks: a wall clock stepped back does not stretch it, nor a stalled monotonic one', async () => {
    const a = instance(leases, clock, 'a');
    await a.start();
    clock.current += LEASE_MS - ATTEMPT_MS; // the lease's true end is one attempt away
    clock.current -= 10_000; // NTP steps the wall clock back 10 s: by it alone the lease would run 10 s longer than the table's
    clock.monotonicOffset += 10_000;
    expect(a.ownership.covers(7, clock.now() + ATTEMPT_MS - 1)).toBe(true);
    expect(a.ownership.covers(7, clock.now() + ATTEMPT_MS)).toBe(false); // by the wall clock alone: until 10 s later
    expect(a.ownership.owned(clock.now())).toMatchObject({ partitions: [] });

    const b = instance(new InMemoryPartitionLeases(), clock, 'b');
    await b.start();
    clock.current += LEASE_MS - ATTEMPT_MS; // a VM suspended that long: its monotonic clock stood still, the wall clock did not
    clock.monotonicOffset -= LEASE_MS - ATTEMPT_MS;
    expect(b.ownership.covers(7, clock.now() + ATTEMPT_MS)).toBe(false);
  });

  it('shares the partitions with an instance that joins: only what rendezvous gives the newcomer moves, once idle here', async () => {
    const movingUser = Array.from({ length: 1000 }, (_, userId) => userId).find(
      (userId) => preferredHolder(['a', 'b'], partitionOf(userId)) === 'b',
    )!;
    const busy = partitionOf(movingUser);
    const a = instance(leases, clock, 'a', new Map([[busy, 1]]));
    await a.start();
    const b = instance(leases, clock, 'b');
    await b.start();
    expect(heldBy(leases, 'b')).toEqual([]); // all held by a: membership suggests, the lease decides

    clock.current += PARTITION_MIN_HOLD_MS;
    await a.ownership.cycle(); // a gives back what b should own, but the partition with an attempt in flight
    await b.ownership.cycle();
    const wanted = Array.from({ length: PARTITION_COUNT }, (_, p) => p).filter((p) => preferredHolder(['a', 'b'], p) === 'b');
    expect(wanted.length).toBeGreaterThan(PARTITION_COUNT / 4);
    expect(wanted.length).toBeLessThan((PARTITION_COUNT * 3) / 4);
    expect(heldBy(leases, 'b')).toEqual(wanted.filter((p) => p !== busy));
    expect(a.lost.sort((x, y) => x - y)).toEqual(wanted);
    expect(heldBy(leases, 'a')).toContain(busy); // kept until its attempt is over, but nothing new starts there
    expect(a.ownership.covers(movingUser, clock.now())).toBe(false);
    expect(a.ownership.holds(movingUser, clock.now())).toBe(true); // its attempt's answer counts: it keeps what it learns

    // Its last attempt ends: it goes back at once, not at a's next round; b looks again a second later, not at its next.
    a.inFlight.clear();
    a.ownership.attemptsEnded(busy);
    await vi.waitFor(() => expect(heldBy(leases, 'a')).not.toContain(busy));
    expect(clock.timeouts).toHaveLength(1); // b's look again, armed when it found the partition still a's
    clock.fire();
    await vi.waitFor(() => expect(heldBy(leases, 'b')).toEqual(wanted));
    expect(heldBy(leases, 'a').length + wanted.length).toBe(PARTITION_COUNT);

    // A third instance takes only from the first two what it wins: nothing moves between them.
    const before = { a: heldBy(leases, 'a'), b: heldBy(leases, 'b') };
    const c = instance(leases, clock, 'c');
    await c.start();
    clock.current += PARTITION_MIN_HOLD_MS;
    for (const each of [a, b, c]) await each.ownership.cycle();
    await c.ownership.cycle();
    expect(heldBy(leases, 'a').every((partition) => before.a.includes(partition))).toBe(true);
    expect(heldBy(leases, 'b').every((partition) => before.b.includes(partition))).toBe(true);
    expect(heldBy(leases, 'a').length + heldBy(leases, 'b').length + heldBy(leases, 'c').length).toBe(PARTITION_COUNT);
  });

  it("takes an instance's share as its word that it is alive ends (killed), not at its own next round", async () => {
    const a = instance(leases, clock, 'a');
    await a.start();
    const b = instance(leases, clock, 'b');
    await b.start();
    clock.current += PARTITION_MIN_HOLD_MS;
    await a.ownership.cycle();
    await b.ownership.cycle(); // b takes its share; this is its last round
    await b.ownership.stop(false); // kill -9: its partitions are not given back
    const ofB = heldBy(leases, 'b');
    expect(ofB.length).toBeGreaterThan(0);
    const bAliveUntil = clock.now() + LEASE_MS;
    // a's rounds every 5 s: b is alive at each; the last one before b's word ends sees it end before a's next.
    while (clock.now() + PARTITION_RENEW_MS < bAliveUntil) {
      clock.current += PARTITION_RENEW_MS;
      await a.ownership.cycle();
    }
    expect(heldBy(leases, 'b')).toEqual(ofB);
    clock.advanceTo(bAliveUntil); // still alive
    expect(heldBy(leases, 'b')).toEqual(ofB);
    clock.advanceTo(bAliveUntil + 1);
    await vi.waitFor(() => expect(heldBy(leases, 'a')).toHaveLength(PARTITION_COUNT));
    expect(a.ownership.count).toBe(PARTITION_COUNT);
  });

  it('drops a partition at once when its renewal changes nothing: another instance took it after the lease ended', async () => {
    const a = instance(leases, clock, 'a');
    await a.start();
    clock.current += LEASE_MS + 1; // a was paused past its leases
    const b = instance(leases, clock, 'b');
    await b.start(); // b takes what rendezvous gives it, the rest stays free until a comes back
    const ofB = heldBy(leases, 'b');
    expect(ofB.length).toBeGreaterThan(0);
    await a.ownership.cycle();
    expect(a.lost).toEqual(expect.arrayContaining(ofB));
    expect(ofB.some((partition) => a.ownership.covers(partition, clock.now()))).toBe(false);
    expect(heldBy(leases, 'a').length + ofB.length).toBe(PARTITION_COUNT);
  });

  it('gives every partition back on shutdown, for the others to take at their next round', async () => {
    const a = instance(leases, clock, 'a');
    await a.start();
    const b = instance(leases, clock, 'b');
    await b.start();
    await a.ownership.stop(true);
    expect(heldBy(leases, 'a')).toEqual([]);
    await b.ownership.cycle();
    expect(heldBy(leases, 'b')).toHaveLength(PARTITION_COUNT);
  });

  it('leaving, gives back at once each partition without an attempt here and takes none; the others as their attempts end', async () => {
    const busy = partitionOf(7);
    const a = instance(leases, clock, 'a', new Map([[busy, 1]]));
    await a.start();
    const b = instance(leases, clock, 'b');
    await b.start(); // all a's: b waits for its share
    a.ownership.depart(); // shutdown begins, well within the minimum hold
    await vi.waitFor(() => expect(heldBy(leases, 'a')).toEqual([busy]));
    expect(a.lost).toHaveLength(PARTITION_COUNT); // the engine hands each over (and keeps its circuits)
    expect(a.ownership.covers(7, clock.now())).toBe(false);
    await b.ownership.cycle(); // a is alive for nobody now: rendezvous gives b every partition
    expect(heldBy(leases, 'b')).toHaveLength(PARTITION_COUNT - 1);

    clock.current += PARTITION_RENEW_MS; // the drain goes on: a renews the lease its attempt needs and takes nothing
    await a.ownership.cycle();
    expect(heldBy(leases, 'a')).toEqual([busy]);
    expect(a.ownership.holds(7, clock.now() + ATTEMPT_MS)).toBe(true);

    a.inFlight.clear();
    a.ownership.attemptsEnded(busy);
    await vi.waitFor(() => expect(heldBy(leases, 'a')).toEqual([]));
    await b.ownership.cycle();
    expect(heldBy(leases, 'b')).toHaveLength(PARTITION_COUNT);
  });

  it('hands the circuits kept for the partitions it takes to the engine before they are its own; a failed read takes them again', async () => {
    const open = { failures: 5, openUntil: clock.now() + 30_000, coolDownMs: 30_000, lastFailureAt: clock.now() };
    const [previous] = await leases.take('z', [partitionOf(7)], clock.now(), clock.now() + 1); // the partition's last owner
    await leases.keepCircuit({ userId: 7, host: 'dead.example', state: open, forgetAfter: clock.now() + 600_000 }, 'z', previous);
    await leases.release('z', [partitionOf(7)]);
    const heard: { circuits: number; owned: boolean }[] = [];
    const ownership = new PartitionOwnership(leases, clock, settings, 'a');
    const circuitsOf = leases.circuitsOf.bind(leases);
    let failRead = true;
    leases.circuitsOf = (partitions, now) => (failRead ? Promise.reject(new Error('connection lost')) : circuitsOf(partitions, now));
    await ownership.start({
      inFlight: () => 0,
      lost: () => undefined,
      gained: () => undefined,
      inherited: (circuits) => heard.push({ circuits: circuits.length, owned: ownership.covers(7, clock.now()) }),
    });
    expect(heard).toEqual([]);
    expect(ownership.count).toBe(0); // taken in the table, not its own: its attempts must not start without the circuits
    expect(heldBy(leases, 'a')).toHaveLength(PARTITION_COUNT);
    failRead = false;
    clock.fire(); // the round a second later takes them again (its own) and reads them
    await ownership.cycle();
    expect(heard).toEqual([{ circuits: 1, owned: false }]);
    expect(ownership.count).toBe(PARTITION_COUNT);
  });

  it('tries a failed round again a second later: a take whose answer was lost leaves partitions nobody claims till then', async () => {
    const a = instance(leases, clock, 'a');
    const answers = loseTakeAnswers(leases);
    await a.start();
    expect(heldBy(leases, 'a')).toHaveLength(PARTITION_COUNT); // the table says they are a's…
    expect(a.ownership.count).toBe(0); // …a does not know it
    answers.lost = false;
    expect(clock.timeouts).toHaveLength(1); // the next round in a second, not at the 5 s interval (which never fires here)
    clock.fire();
    await a.ownership.cycle();
    expect(a.ownership.count).toBe(PARTITION_COUNT);
    expect(a.gained()).toBe(1);
  });

  it('gives back what a take whose answer was lost gave it, once another instance should own it (seed 142534)', async () => {
    const a = instance(leases, clock, 'a');
    const answers = loseTakeAnswers(leases);
    await a.start(); // alone: it asked for all 256, and does not know it got them
    answers.lost = false;
    const b = instance(leases, clock, 'b');
    await b.start(); // b's share is a's in the table
    expect(heldBy(leases, 'b')).toEqual([]);
    clock.fire(); // a's round a second later: it takes its share, and gives back b's
    await a.ownership.cycle();
    const shareOfB = Array.from({ length: PARTITION_COUNT }, (_, p) => p).filter((p) => preferredHolder(['a', 'b'], p) === 'b');
    expect(heldBy(leases, 'a')).toEqual(Array.from({ length: PARTITION_COUNT }, (_, p) => p).filter((p) => !shareOfB.includes(p)));
    await b.ownership.cycle(); // not a lease (27 s) later
    expect(heldBy(leases, 'b')).toEqual(shareOfB);
  });

  it("keeps a circuit only while it holds the user's partition, never over what the partition's new owner kept", async () => {
    const a = instance(leases, clock, 'a');
    await a.start();
    const circuit = (userId: number, failures: number, openUntil: number | null) => ({
      userId,
      host: 'dead.example',
      state: { failures, openUntil, coolDownMs: 30_000, lastFailureAt: clock.now() },
      forgetAfter: clock.now() + 600_000,
    });
    // b's clock runs ahead: it finds a's lease on user 7's partition ended, takes it, and opens the endpoint's circuit.
    const [taken] = await leases.take('b', [partitionOf(7)], clock.now() + LEASE_MS + 1, clock.now() + 2 * LEASE_MS);
    const opened = circuit(7, 3, clock.now() + 30_000);
    await leases.keepCircuit(opened, 'b', taken);
    a.ownership.keepCircuit(circuit(7, 1, null)); // a still believes it holds the partition: its write changes nothing
    clock.current += LEASE_MS; // a's leases ended on its own clock too (a pause): it writes nothing, taken or not
    a.ownership.keepCircuit(circuit(8, 3, clock.now() + 30_000));
    await a.ownership.stop(true); // its writes are over
    expect(await leases.circuitsOf([partitionOf(7), partitionOf(8)], clock.now())).toEqual([opened]);
  });

  it('answers what a claim may take even when the look drops a lease that ended (the clock jumped past it)', async () => {
    const a = instance(leases, clock, 'a');
    await a.start();
    clock.current += LEASE_MS + 1; // a pause, or a test clock moved on: every lease ended
    expect(a.ownership.owned(clock.now())).toMatchObject({ holder: 'a', partitions: [] });
  });

  it("says a claim here may take a user's due delivery only where a partition is held, or a round comes first", async () => {
    const a = instance(leases, clock, 'a');
    await a.start();
    const b = instance(leases, clock, 'b');
    await b.start(); // a holds every partition: b's claims could take nothing, and a publish on b wakes no claim there
    expect(a.ownership.mayClaim(7, clock.now())).toBe(true);
    expect(b.ownership.mayClaim(7, clock.now())).toBe(false);
    // Leases too short to start an attempt on: a claim first runs a round, which may take (or renew) the partition.
    clock.current += LEASE_MS - ATTEMPT_MS;
    expect(b.ownership.mayClaim(7, clock.now())).toBe(false); // b holds none: no lease of its ends
    expect(a.ownership.mayClaim(7, clock.now())).toBe(true);
    clock.current += ATTEMPT_MS + 1;
    await b.ownership.cycle(); // a's leases ended unrenewed (a paused): b, the one instance alive, takes every partition
    expect(b.ownership.mayClaim(7, clock.now())).toBe(true);
    expect(a.ownership.mayClaim(7, clock.now())).toBe(true); // a claim there first runs a round, and learns it lost them
  });

  it('owns nothing in an api process, and everything without statements where one process delivers (SQLite)', async () => {
    const api = new PartitionOwnership(leases, clock, { ...settings, role: 'api' }, 'api');
    await api.start({ inFlight: () => 0, lost: () => undefined, gained: () => undefined, inherited: () => undefined });
    expect(api.count).toBe(0);
    expect(api.covers(1, clock.now())).toBe(false);
    expect(api.mayClaim(1, clock.now())).toBe(false);
    const sole = new PartitionOwnership(
      Object.assign(Object.create(leases) as InMemoryPartitionLeases, { shared: false }),
      clock,
      settings,
      'sole',
    );
    await sole.start({ inFlight: () => 0, lost: () => undefined, gained: () => undefined, inherited: () => undefined });
    expect(sole.owned(clock.now())).toBe('all');
    expect(sole.covers(1, Number.MAX_SAFE_INTEGER)).toBe(true);
    expect(sole.mayClaim(1, clock.now())).toBe(true);
    expect(leases.instances.size).toBe(0);
  });
});
