import type { Prng } from './prng';
import type { SimTime } from './sim-time';
import { formatMs, type HostTransaction, type Instance, SECOND } from './world-model';

/** What pausing, stopping or crashing an instance's process needs of the world. */
export interface ProcessWorld {
  readonly time: SimTime;
  readonly random: Prng;
  readonly transactions: readonly HostTransaction[];
  trace(text: string): void;
}

/** A process pause (GC, SIGSTOP, VM migration) of 1 to 90 s: none of its timers fires and no answer reaches it meanwhile. */
export function pause(world: ProcessWorld, instance: Instance): void {
  const until = Math.max(instance.clock.pausedUntil, world.time.now + world.random.int(SECOND, 90 * SECOND));
  // A pause that starts while one runs lengthens it: one pause, from the first one's start (seed 102821).
  const running = instance.clock.pausedUntil > world.time.now ? instance.pauses.pop() : undefined;
  instance.clock.pausedUntil = until;
  instance.pauses.push({ from: running?.from ?? world.time.now, until });
  instance.stalledUntil = Math.max(instance.stalledUntil, until);
  world.time.schedule(until, () => undefined);
  world.trace(`pause ${instance.name} for ${formatMs(until - world.time.now)}`);
}

/**
 * A graceful shutdown (a rolling deploy, a scale-in): the engine hands back what it has not started, drains what is in
 * flight and gives its partitions back; then the process exits.
 */
export function shutdown(world: ProcessWorld, instance: Instance): void {
  world.trace(`shutdown ${instance.name}`);
  instance.stopping = true;
  void instance.engine.beforeApplicationShutdown().then(() => {
    if (!instance.alive) return;
    world.trace(`  ${instance.name} stopped`);
    crash(world, instance, 'exit');
  });
}

/** The process is gone (killed, or exited after its shutdown): its timers stop and its open host transactions roll back. */
export function crash(world: ProcessWorld, instance: Instance, how: 'crash' | 'exit' = 'crash'): void {
  instance.alive = false;
  instance.clock.halt();
  for (const t of world.transactions) {
    if (t.instance === instance && t.tx.state === 'open') {
      t.tx.rollback();
      world.trace(`  ${t.tx.name} rolled back with its process`);
    }
  }
  if (how === 'crash') world.trace(`crash ${instance.name}`);
}
