import type { DeliverySettings } from '../../src/notifications/delivery/delivery-settings';
import type { DeliveryEvents } from '../../src/notifications/delivery/events/delivery-events.service';
import type { OutboxEngine } from '../../src/notifications/delivery/engine/outbox-engine.service';
import type { EndpointQueues, QueuedAttempt } from '../../src/notifications/delivery/engine/endpoint-queues';
import type { InstanceCapacity } from '../../src/notifications/delivery/engine/instance-capacity';
import type { AttemptRecord } from '../../src/notifications/delivery/engine/outbox-store';
import type { PartitionOwnership } from '../../src/notifications/delivery/partitions/partition-ownership';
import { DeliveryStatus } from '../../src/notifications/delivery/entities/webhook-delivery.entity';
import type { InMemoryOutboxStore } from './in-memory-outbox-store';
import type { InvariantName } from './invariants';

/**
 * A deliberately broken engine or store, and the invariant that must catch it: a check that no broken code could fail
 * is a defect. `regressions.e2e-spec.ts` runs each on a seed where the whole engine holds that invariant, and expects the
 * mutant to break it; `npm run test:simulation -- --mutation=<name>` looks for such seeds.
 */
export interface Mutation {
  readonly invariant: InvariantName;
  readonly breaks: string;
  /** Breaks the shared outbox (the database). */
  readonly store?: (store: InMemoryOutboxStore) => void;
  /** Breaks what an instance's engine is built with, or the engine once built. */
  readonly settings?: (settings: DeliverySettings) => DeliverySettings;
  readonly engine?: (engine: OutboxEngine, events: DeliveryEvents) => void;
  /** Breaks an instance's hold on its partitions. */
  readonly ownership?: (ownership: PartitionOwnership) => void;
}

/** Every instance believes it owns every partition: claims, leases and attempts are no longer fenced by the partition leases. */
function everyoneOwnsAll(ownership: PartitionOwnership): void {
  around(ownership, 'owned', () => () => 'all');
  around(ownership, 'covers', () => () => true);
  around(ownership, 'holds', () => () => true);
}

type QueuedJob = Parameters<EndpointQueues<QueuedAttempt>['push']>[0];
type Writable<T> = { -readonly [K in keyof T]: T[K] };

/** Replaces a method of `target`, the original passed to the replacement. */
function around<T extends object, K extends keyof T>(target: T, name: K, replacement: (original: T[K]) => T[K]): void {
  const original = (target[name] as (...args: unknown[]) => unknown).bind(target) as T[K];
  (target as Writable<T>)[name] = replacement(original);
}

/** Stores every attempt record as `rewrite` makes it. */
function rewriteRecords(store: InMemoryOutboxStore, rewrite: (record: AttemptRecord) => AttemptRecord): void {
  around(
    store,
    'recordAttempts',
    (record) => (attempts) => record(attempts.map(({ claim, record: made }) => ({ claim, record: rewrite(made) }))),
  );
}

export const MUTATIONS = {
  'circuits-not-kept': {
    invariant: 'circuit-inherited',
    breaks: "an owner keeps no circuit for the next owner of its users' partitions",
    ownership: (ownership) => around(ownership, 'keepCircuit', () => () => undefined),
  },
  'circuits-kept-late': {
    invariant: 'circuit-inherited',
    breaks: "an owner writes a circuit's change a moment late: after the partition of the last attempt that changed it went back",
    ownership: (ownership) => around(ownership, 'keepCircuit', (keep) => (circuit) => void Promise.resolve().then(() => keep(circuit))),
  },
  'circuits-not-inherited': {
    invariant: 'circuit-inherited',
    breaks: 'a new owner ignores the circuits kept for the partitions it takes',
    ownership: (ownership) => around(ownership, 'start', (start) => (listener) => start({ ...listener, inherited: () => undefined })),
  },
  'claims-take-leased-rows': {
    invariant: 'no-duplicate-send',
    breaks: 'a claim takes rows whose lease still runs',
    store: (store) =>
      around(store, 'openClaim', (openClaim) => (limit, lease, fairness) => {
        for (const row of store.deliveries.values())
          if (row.lockedUntil !== null && row.lockedUntil >= lease.now) row.lockedUntil = lease.now - 1;
        return openClaim(limit, lease, fairness);
      }),
  },
  'records-count-twice': {
    invariant: 'attempt-numbers',
    breaks: 'a record adds two to the attempt count',
    store: (store) =>
      around(store, 'recordAttempts', (record) => async (attempts) => {
        const stored = await record(attempts);
        attempts.forEach(({ claim }, index) => {
          const row = store.deliveries.get(claim.id);
          if (stored[index] && row?.status === DeliveryStatus.PENDING) row.attemptCount++;
        });
        return stored;
      }),
  },
  'retries-due-at-once': {
    invariant: 'retry-delays',
    breaks: "a failed attempt's retry is due at once",
    store: (store) => rewriteRecords(store, (made) => ({ ...made, nextAttemptAt: made.nextAttemptAt && made.startedAt })),
  },
  'retries-never-due': {
    invariant: 'final-within-schedule',
    breaks: 'a failed attempt is never due again',
    store: (store) => rewriteRecords(store, (made) => ({ ...made, nextAttemptAt: made.nextAttemptAt && Number.MAX_SAFE_INTEGER })),
  },
  'host-writes-before-commit': {
    invariant: 'commit-before-send',
    breaks: "a publish inside a host's transaction is written at once, not with its commit",
    store: (store) =>
      around(store, 'enqueueWithin', () => async (_transaction, events, placeOf, lease) => {
        await store.enqueue(events, placeOf, lease);
      }),
  },
  'purges-take-pending': {
    invariant: 'no-lost-event',
    breaks: 'retention purges PENDING deliveries too',
    store: (store) =>
      around(store, 'purgeBatch', (purge) => async (status, before, limit) => {
        const pending = await purge(DeliveryStatus.PENDING, before, limit);
        const finished = await purge(status, before, limit);
        return { ...finished, events: finished.events + pending.events };
      }),
  },
  'no-pending-unique-index': {
    invariant: 'one-pending-delivery',
    breaks: 'the unique index on PENDING deliveries is gone (a redelivery does not see the running one)',
    store: (store) => {
      (store as unknown as { pendingOf: () => undefined }).pendingOf = () => undefined;
    },
  },
  'delivered-stays-pending': {
    invariant: 'no-request-for-delivered',
    breaks: 'a DELIVERED record leaves its delivery PENDING, due a minute later',
    store: (store) =>
      rewriteRecords(store, (made) =>
        made.status === DeliveryStatus.DELIVERED
          ? { ...made, status: DeliveryStatus.PENDING, nextAttemptAt: made.startedAt + 60_000 }
          : made,
      ),
  },
  'capacity-tenfold': {
    invariant: 'bounded-memory',
    breaks: 'the engine takes on ten times the deliveries its memory bound allows',
    engine: (engine) => {
      const capacity = (engine as unknown as { capacity: { capacity(): number } }).capacity;
      around(capacity, 'capacity', (original) => () => original() * 10);
    },
  },
  'records-uncounted': {
    invariant: 'bounded-memory',
    breaks: 'the engine stops counting a lease against its room as its attempt ends, not once its record is stored',
    engine: (engine) => {
      const capacity = (engine as unknown as { capacity: InstanceCapacity }).capacity;
      around(capacity, 'enter', (original) => (step, count) => original(step, step === 'settle' ? 0 : count));
      around(capacity, 'leave', (original) => (step, count) => original(step, step === 'settle' ? 0 : count));
    },
  },
  'cap-raised': {
    invariant: 'endpoint-cap',
    breaks: 'the engine lets two more attempts per endpoint fly than it is configured for',
    settings: (settings) => ({ ...settings, perEndpointConcurrency: settings.perEndpointConcurrency + 2 }),
  },
  'partitions-unfenced': {
    invariant: 'one-owner',
    breaks: 'every instance claims and sends for every partition, whoever holds its lease',
    ownership: everyoneOwnsAll,
  },
  'probes-unguarded': {
    invariant: 'one-probe',
    breaks: 'every instance may probe an endpoint at once (each believes it owns every partition)',
    ownership: everyoneOwnsAll,
  },
  'answered-probes-fail': {
    invariant: 'no-spurious-skip',
    breaks: "a probe's answer counts as unreachable: the circuit stays open and the endpoint's attempts are skipped",
    engine: (engine) => {
      const queues = (engine as unknown as { queues: EndpointQueues<QueuedJob> }).queues;
      around(
        queues,
        'finished',
        (finished) => (attempt, outcome, now) => finished(attempt, queues.isHalfOpen(attempt.endpoint, now) ? 'timeout' : outcome, now),
      );
    },
  },
  'stand-down-keeps-failures': {
    invariant: 'no-spurious-skip',
    breaks: 'an instance standing down (its own network down) hands its failures over as if the endpoints had failed',
    engine: (engine) => {
      const queues = (engine as unknown as { queues: EndpointQueues<QueuedJob> }).queues;
      around(queues, 'handOver', (handOver) => (users) => handOver(users, null));
    },
  },
  'polls-find-nothing': {
    invariant: 'prompt-pickup',
    breaks: "an instance's look for due work never finds any: what others publish for its partitions waits for its minute tick",
    store: (store) => around(store, 'anyDue', () => () => Promise.resolve(false)),
  },
  'egress-ignored': {
    invariant: 'egress-stand-down',
    breaks: 'an instance whose own network is down keeps its partitions, so its users wait while others could deliver',
    ownership: (ownership) => around(ownership.egress, 'standsDown', () => () => false),
  },
  'claims-ignore-order': {
    invariant: 'ordered-delivery',
    breaks: "a claim takes an ordered stream's deliveries whether or not the one before is final",
    store: (store) => around(store, 'inTurn', () => () => true),
  },
  'announces-twice': {
    invariant: 'announced-once',
    breaks: 'every recorded attempt is announced twice',
    engine: (_engine, events) =>
      around(events, 'emit', (emit) => (name, fact) => {
        emit(name, fact);
        if (name === 'attemptRecorded') emit(name, fact);
      }),
  },
  'wake-ups-reject': {
    invariant: 'no-unhandled-rejection',
    breaks: "the engine's wake-ups fail, and nothing handles their rejection",
    engine: (engine) => {
      const wakeUps = (engine as unknown as { wakeUps: { wake: () => Promise<void> } }).wakeUps;
      around(wakeUps, 'wake', () => () => Promise.reject(new Error('mutation: wake-ups reject')));
    },
  },
  'pump-never-rests': {
    invariant: 'no-livelock',
    breaks: 'the attempt pump arms itself again after every run, forever',
    engine: (engine) => {
      const runner = (engine as unknown as { runner: { pump(): void } }).runner;
      around(runner, 'pump', (pump) => () => {
        pump();
        setImmediate(() => runner.pump());
      });
    },
  },
} satisfies Record<string, Mutation>;

export type MutationName = keyof typeof MUTATIONS;
export const MUTATION_NAMES = Object.keys(MUTATIONS) as MutationName[];
