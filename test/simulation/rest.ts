import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import type { DatabaseFaults } from './database-faults';
import { type InstanceWorld, startInstance } from './instances';
import type { InvariantName } from './invariants';
import type { StateInvariants } from './state-invariants';
import { formatMs, MINUTE, SETTLE_TURNS_MAX } from './world-model';

/** What running time and coming to rest need of the world. */
export interface RestWorld extends InstanceWorld {
  readonly database: DatabaseFaults;
  readonly invariants: Pick<StateInvariants, 'check' | 'checkIfMoved'>;
  /** Time no instance could deliver (the database down, or every delivering instance paused or dead). */
  haltedMs: number;
  step: number;
  violate(name: InvariantName, key: string, detail: string): void;
}

const realSetImmediate = globalThis.setImmediate;
const realNextTick = process.nextTick;
let pendingImmediates = 0;
/** Whether a callback of someone else's ran on the tick queue since the latest barrier was queued. */
let tickRan = false;
function countedSetImmediate(run: (...args: unknown[]) => void, ...args: unknown[]): NodeJS.Immediate {
  pendingImmediates++;
  return realSetImmediate(() => {
    pendingImmediates--;
    run(...args);
  });
}
function countedNextTick(run: (...args: unknown[]) => void, ...args: unknown[]): void {
  realNextTick(() => {
    tickRan = true;
    run(...args);
  });
}

/**
 * Counts the setImmediate calls from now, and notes the process.nextTick ones, so that the simulation knows when the
 * engines are at rest (GroupCommit and AfterCommit use setImmediate); returns what puts the real ones back.
 */
export function countImmediates(): () => void {
  globalThis.setImmediate = countedSetImmediate as typeof setImmediate;
  process.nextTick = countedNextTick as typeof process.nextTick;
  return () => {
    globalThis.setImmediate = realSetImmediate;
    process.nextTick = realNextTick;
  };
}

/**
 * Resolves once every microtask queued so far, and every one they queue, has run: Node runs the tick queue only once
 * the microtask queue is empty, so a tick queued now runs then, unless another tick ran first (its microtasks may still
 * be queued behind this one): false then, and the caller looks again.
 */
async function microtasksDrained(): Promise<boolean> {
  tickRan = false;
  await new Promise<void>((resolve) => realNextTick(resolve));
  return !tickRan;
}

/**
 * Lets the engines run until nothing moves: every microtask, tick and setImmediate chain done. Most steps need no turn
 * of the event loop (a tick after the microtasks is enough): the simulation runs twice as fast as with a turn per step.
 */
export async function settle(world: RestWorld): Promise<void> {
  for (let turn = 0; ; turn++) {
    if (turn > SETTLE_TURNS_MAX) {
      world.violate('no-livelock', 'livelock', `still busy after ${SETTLE_TURNS_MAX} turns of the event loop`);
      return;
    }
    if ((await microtasksDrained()) && pendingImmediates === 0) return;
    // What continues later was handed to setImmediate (counted): a turn of the event loop runs it.
    if (pendingImmediates > 0) await new Promise<void>((resolve) => realSetImmediate(resolve));
  }
}

/** Runs everything due up to `target` in order, coming to rest and checking the invariants after each. */
export async function advanceTo(world: RestWorld, target: number): Promise<void> {
  for (;;) {
    const at = world.time.nextAt();
    if (at === null || at > target) break;
    account(world, at);
    world.time.runNext(target);
    await settle(world);
    world.invariants.checkIfMoved();
  }
  account(world, target);
  world.time.now = Math.max(world.time.now, target);
  world.invariants.check();
}

/** Time no instance could deliver (the database down, or every delivering instance paused or dead) moves the deadlines. */
function account(world: RestWorld, to: number): void {
  const now = world.time.now;
  const deliverers = world.instances.filter((instance) => instance.alive && instance.role !== 'api');
  const pausedUntil = Math.min(to, ...deliverers.map((instance) => Math.max(instance.clock.pausedUntil, now)));
  const outageUntil = Math.min(to, world.database.current()?.until ?? now);
  world.haltedMs += Math.max(pausedUntil, outageUntil) - now;
}

/** No new work: open transactions end, crashed instances restart, time runs until every delivery is final. */
export async function quiesce(world: RestWorld): Promise<void> {
  world.trace('quiet phase: no new work, crashed instances restart, time runs out the schedule');
  for (const t of world.transactions) {
    if (t.tx.state !== 'open') continue;
    if (t.ready) {
      t.tx.commit();
      for (const event of t.events) event.acked = true;
      world.trace(`commit ${t.tx.name}`);
      world.observer.observeStore();
    } else t.tx.rollback();
  }
  for (let slot = 0; slot < world.roles.length; slot++) {
    if (!world.instances.some((instance) => instance.slot === slot && instance.alive)) startInstance(world, slot, world.roles[slot]);
  }
  await settle(world);
  const deadlines = [...world.observer.tracks.values()].map((track) => track.deadline + world.haltedMs - track.haltedAtCreation);
  const end = Math.max(world.time.now, ...deadlines) + 2 * MINUTE;
  while (world.time.now < end && anyPending(world)) {
    world.step++;
    world.trace(`advance ${formatMs(10 * MINUTE)} (quiet)`);
    await advanceTo(world, Math.min(end, world.time.now + 10 * MINUTE));
  }
}

function anyPending(world: RestWorld): boolean {
  return [...world.store.deliveries.values()].some((row) => row.status === DeliveryStatus.PENDING);
}
