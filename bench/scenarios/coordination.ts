// Issue 34's coordination figures: the statements instances spend on who owns which partition (the partitions, the
// instances alive, the circuits kept for the next owner), per delivery at full size, with one instance and with three on
// one database; and how three instances share the work of a few busy users, since a user's deliveries are one owner's.
import { type BenchContext, round } from '../lib/context';
import { deliveryStates } from '../lib/delivery-states';
import { type DeliveryRunResult, measureDeliveryRun } from '../lib/delivery-run';
import { metricTotal } from '../lib/metrics';
import { databaseServerPids } from '../lib/cpu';
import { type IpcService, startIpcService } from '../lib/services';
import type { Target } from '../lib/report';
import { partitionsSettled } from '../lib/partitions-settled';
import { benchEvents, enableWebhooks, publishViaIpc } from '../lib/workload';

/** The tables of the coordination between instances. */
const COORDINATION_TABLES = ['webhook_partitions', 'webhook_delivery_instances', 'webhook_endpoint_circuits'];
const BUSY_USERS = 5;

export interface CoordinationRun extends DeliveryRunResult {
  readonly processes: number;
  readonly users: number;
  /** Statements on the coordination tables per delivery, all instances together, over the run. */
  readonly coordinationPerDelivery: number;
  /** Every statement of the instances per delivery (the outbox's too), all instances together. */
  readonly statementsPerDelivery: number;
  /** The coordination statements by kind and table. */
  readonly coordinationStatements: Record<string, number>;
  /** Attempts each instance made (its `webhook_attempts_total`). */
  readonly attemptsByInstance: readonly number[];
}

export interface CoordinationResult {
  readonly oneInstance: CoordinationRun;
  readonly threeInstances: CoordinationRun;
  /** The same events for {@link BUSY_USERS} users over three instances: each user is one instance's. */
  readonly fiveBusyUsers: CoordinationRun;
  readonly targets: Record<string, Target>;
}

export async function coordination(context: BenchContext, log: (message: string) => void): Promise<CoordinationResult> {
  if (context.server.kind !== 'mysql')
    throw new Error('coordination needs MariaDB/MySQL (TEST_MYSQL_URL): on SQLite one process owns every partition');
  const { users } = context.size;
  const oneInstance = await coordinationRun(context, 1, users);
  log(`coordination: 1 instance, ${oneInstance.coordinationPerDelivery} statements per delivery`);
  const threeInstances = await coordinationRun(context, 3, users);
  log(
    `coordination: 3 instances, ${threeInstances.coordinationPerDelivery} per delivery (${threeInstances.statementsPerDelivery} statements in all), attempts ${threeInstances.attemptsByInstance}`,
  );
  const fiveBusyUsers = await coordinationRun(context, 3, BUSY_USERS);
  log(
    `coordination: ${BUSY_USERS} busy users over 3 instances, ${fiveBusyUsers.deliveriesPerSecond}/s, attempts ${fiveBusyUsers.attemptsByInstance}`,
  );
  const atMost = (value: number, limit: number): Target => ({ ratio: value, atMost: limit, met: value <= limit });
  return {
    oneInstance,
    threeInstances,
    fiveBusyUsers,
    targets: {
      // One MySQL instance cannot know it is alone without saying so: a heartbeat and a renewal every 5 s, whatever the load.
      coordinationPerDeliveryOneInstance: atMost(oneInstance.coordinationPerDelivery, 0.001),
      coordinationPerDeliveryThreeInstances: atMost(threeInstances.coordinationPerDelivery, 0.05),
    },
  };
}

/** `processes` services on one database, the events for `users` users published through them in turn, batch by batch. */
async function coordinationRun(context: BenchContext, processes: number, users: number): Promise<CoordinationRun> {
  const { events: count, batchSize } = context.size;
  const database = await context.server.create(`coordination${processes}_${users}`);
  const services: IpcService[] = [];
  try {
    for (let i = 0; i < processes; i++)
      services.push(
        await startIpcService({ database: database.env, caFile: context.caFile }, context.logDir, `coordination-${users}u-${i + 1}`),
      );
    await context.receiver.call('setSecrets', await enableWebhooks(services[0].base, users, context.bases));
    await context.receiver.call('reset');
    // The split measured, not the hand-over: a fast run would end within the first instance's minimum hold.
    if (processes > 1) await partitionsSettled(services.map((service) => service.base));
    const events = benchEvents(0, count, users);
    for (const service of services) await service.ipc.call('queryCounts', true);
    const attemptsBefore = await Promise.all(services.map((service) => metricTotal(service.base, 'webhook_attempts_total')));
    const run = await measureDeliveryRun(context, {
      label: `coordination (${processes} instance(s), ${users} users)`,
      expected: events.length,
      pids: () => ({
        services: services.map((service) => service.ipc.process.pid!),
        receiver: [context.receiver.process.pid!],
        driver: [process.pid],
        database: databaseServerPids(),
      }),
      publish: async () => {
        const slices = services.map((_, i) => events.filter((__, index) => Math.floor(index / batchSize) % processes === i));
        const queued = await Promise.all(services.map((service, i) => publishViaIpc(service.ipc, slices[i], batchSize)));
        return queued.reduce((sum, value) => sum + value, 0);
      },
      diagnose: () => deliveryStates(database),
    });
    const statements: Record<string, number> = {};
    let all = 0;
    for (const service of services)
      for (const [key, value] of Object.entries(await service.ipc.call<Record<string, number>>('queryCounts', true))) {
        all += value;
        if (COORDINATION_TABLES.some((table) => key.endsWith(` ${table}`))) statements[key] = (statements[key] ?? 0) + value;
      }
    const attemptsAfter = await Promise.all(services.map((service) => metricTotal(service.base, 'webhook_attempts_total')));
    const total = Object.values(statements).reduce((sum, value) => sum + value, 0);
    return {
      processes,
      users,
      ...run,
      coordinationPerDelivery: round(total / Math.max(1, run.delivered), 4),
      statementsPerDelivery: round(all / Math.max(1, run.delivered), 3),
      coordinationStatements: statements,
      attemptsByInstance: attemptsAfter.map((after, i) => after - attemptsBefore[i]),
    };
  } finally {
    await Promise.all(services.map((service) => service.stop()));
    await database.drop();
  }
}
