import type { EventType } from '../../src/notifications/catalog/event-catalog';
import type { DeliverySettings } from '../../src/notifications/delivery/delivery-settings';
import type { AfterCommit } from '../../src/notifications/delivery/engine/after-commit.subscriber';
import type { Job } from '../../src/notifications/delivery/engine/attempt-runner';
import type { EndpointQueues } from '../../src/notifications/delivery/engine/endpoint-queues';
import { OutboxEngine } from '../../src/notifications/delivery/engine/outbox-engine.service';
import type { ClaimedDelivery } from '../../src/notifications/delivery/engine/outbox-store';
import { DeliveryEvents } from '../../src/notifications/delivery/events/delivery-events.service';
import type { WebhookSender } from '../../src/notifications/delivery/http/webhook-sender';
import { PartitionOwnership } from '../../src/notifications/delivery/partitions/partition-ownership';
import type { PreferencesService } from '../../src/notifications/preferences/preferences.service';
import type { ProcessRole } from '../../src/notifications/process-role';
import { DeliveryScheduler } from '../../src/notifications/scheduler/delivery-scheduler.service';
import { SimTransaction } from './in-memory-outbox-store';
import { InstanceStore, type StoreWorld } from './instance-store';
import type { Mutation } from './mutations';
import { SimulatedSender, type SenderWorld } from './sender';
import { type ClockSkews, SimClock } from './sim-time';
import type { StoreObserver } from './store-observer';
import type { UserWebhooks } from './webhooks';
import { formatMs, type Instance, MINUTE } from './world-model';

/** What starting an instance needs of the world: what its engine's store, sender and preferences are made of. */
export interface InstanceWorld extends SenderWorld, StoreWorld {
  readonly settings: DeliverySettings;
  readonly roles: readonly ProcessRole[];
  readonly mutation: Mutation | undefined;
  readonly skews: ClockSkews;
  readonly faults: { readonly prefsFail: number; readonly pauseAtSend: number };
  readonly webhooks: UserWebhooks;
  readonly observer: StoreObserver;
  readonly instances: Instance[];
  /** Instances started so far: a restarted slot's name tells which start it is. */
  generation: number;
}

/**
 * Starts a process in `slot`: a real OutboxEngine (and its scheduler's cron) over this instance's faulty view of the
 * store (instance-store.ts), the simulated sender, the users' preferences (whose reads may fail) and host transactions,
 * on a clock of its own (offset by a fresh skew); a mutation, if any, breaks it.
 */
export function startInstance(world: InstanceWorld, slot: number, role: ProcessRole): void {
  const generation = world.generation++;
  const skew = world.skews.draw();
  const clock = new SimClock(world.time, skew);
  const settings = { ...world.settings, role };
  const events = new DeliveryEvents();
  const instance = {
    slot,
    name: `i${slot + 1}${generation >= world.roles.length ? `.${generation}` : ''}`,
    role,
    clock,
    settings,
    alive: true,
    stopping: false,
    startedAt: world.time.now,
    claims: new Map<string, ClaimedDelivery[]>(),
    inFlight: new Map<string, number>(),
    inFlightTotal: 0,
    pauses: [],
    stalledUntil: 0,
    leasesReadAt: Number.NEGATIVE_INFINITY,
    leasesSeen: new Set(),
    claimedAt: Number.NEGATIVE_INFINITY,
    tookAt: Number.NEGATIVE_INFINITY,
    partitionLeases: new Map(),
  } as Omit<Instance, 'engine' | 'ownership' | 'scheduler' | 'purge'> as Instance;
  const store = new InstanceStore(world, instance);
  const sender = new SimulatedSender(world, instance);
  const preferences = {
    webhookTargets: (pairs: readonly { userId: number; type: EventType }[]) => {
      world.activity++;
      if (world.random.chance(world.faults.prefsFail)) return Promise.reject(new Error('simulated preferences read failure'));
      return Promise.resolve(world.webhooks.targetsOf(pairs));
    },
  };
  const afterCommit = {
    transactionOf: (transaction: unknown) => {
      if (!(transaction instanceof SimTransaction) || transaction.state !== 'open') throw new TypeError('not inside an open transaction');
      return transaction;
    },
    defer: (transaction: SimTransaction, work: () => void, rolledBack?: () => void) => transaction.defer(work, rolledBack),
  };
  const engineSettings = world.mutation?.settings?.(settings) ?? settings;
  const ownership = new PartitionOwnership(store.partitionLeases(), clock, engineSettings, instance.name);
  world.mutation?.ownership?.(ownership);
  const engine = new OutboxEngine(
    store,
    preferences as unknown as PreferencesService,
    sender as unknown as WebhookSender,
    clock,
    events,
    engineSettings,
    afterCommit as unknown as AfterCommit,
    ownership,
  );
  watchStandDowns(world, instance, engine, ownership);
  world.mutation?.engine?.(engine, events);
  Object.assign(instance, { engine, ownership, scheduler: new DeliveryScheduler(engine, events, clock), purge: store.purge() });
  events.attemptRecorded.subscribe(({ deliveryId, attemptNumber }) => world.observer.noteAnnounced(instance, deliveryId, attemptNumber));
  events.circuitOpened.subscribe(({ userId, host, until }) => {
    const endpoint = `${userId} ${host}`;
    world.circuits.opened(instance, endpoint, world.time.now, until - clock.skewMs);
    world.trace(`  ${instance.name}: circuit of ${endpoint} open until +${formatMs(until - clock.now())}`);
  });
  world.instances.push(instance);
  void engine.onApplicationBootstrap();
  everyMinute(instance);
  world.trace(`start ${instance.name} (${role}, clock ${skew} ms off)`);
}

/**
 * As the engine hands over partitions standing down (its own network down), the failures it saw on the endpoints it
 * still knows, since its last answer from any receiver, become its own (see StoreObserver.noteHandingOverAlone): told
 * from the engine's hand-over, whatever it then does with them.
 */
function watchStandDowns(world: InstanceWorld, instance: Instance, engine: OutboxEngine, ownership: PartitionOwnership): void {
  const queues = (engine as unknown as { queues: EndpointQueues<Job> }).queues;
  const known = (queues as unknown as { endpoints: ReadonlyMap<string, { readonly userId: number }> }).endpoints;
  const handOver = queues.handOver.bind(queues);
  queues.handOver = (users, failedAlone) => {
    if (ownership.isStandingDown)
      world.observer.noteHandingOverAlone(
        instance,
        [...known].filter(([, endpoint]) => users(endpoint.userId)).map(([key, { userId }]) => ({ key, userId })),
      );
    return handOver(users, failedAlone);
  };
}

/** The scheduler's cron: at each minute of the instance's own clock. */
function everyMinute(instance: Instance): void {
  const now = instance.clock.now();
  instance.clock.setTimeout(
    () => {
      void instance.scheduler.tick().catch(() => undefined);
      everyMinute(instance);
    },
    Math.ceil((now + 1) / MINUTE) * MINUTE - now,
  );
}
