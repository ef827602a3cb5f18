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
let pendingImmediates = 0;
function countedSetImmediate(run: (...args: unknown[]) => void, ...args: unknown[]): NodeJS.Immediate {
  pendingImmediates++;
  return realSetImmediate(() => {
    pendingImmediates--;
    run(...args);
  });
}

/**
 * Counts the setImmediate calls from now, so that the simulation knows when the engines are at rest (GroupCommit and
 * AfterCommit use it); returns what puts the real one back.
 */
export function countImmediates(): () => void {
  globalThis.setImmediate = countedSetImmediate as typeof setImmediate;
  return () => {
    globalThis.setImmediate = realSetImmediate;
  };
}

/** Lets the engines run until nothing moves: every microtask and setImmediate chain done. */
export async function settle(world: RestWorld): Promise<void> {
  for (let turn = 0; ; turn++) {
    if (turn > SETTLE_TURNS_MAX) {
      world.violate('no-livelock', 'livelock', `still busy after ${SETTLE_TURNS_MAX} turns of the event loop`);
      return;
    }
    // Every microtask runs before this turn ends; what continues later was handed to setImmediate (counted).
    await new Promise<void>((resolve) => realSetImmediate(resolve));
    if (pendingImmediates === 0) return;
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
