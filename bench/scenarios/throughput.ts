import { join } from 'node:path';
import { deliveryStates } from '../lib/delivery-states';
import type { BenchContext } from '../lib/context';
import type { BenchDatabase } from '../lib/databases';
import { databaseServerPids } from '../lib/cpu';
import { type DeliveryRun, type DeliveryRunResult, measureDeliveryRun } from '../lib/delivery-run';
import { summarizeProfile, type ProfileSummary } from '../lib/profile-summary';
import { type MainProcess, startIpcService, startMainProcess } from '../lib/services';
import { benchEvents, enableWebhooks, publishViaHttp, publishViaIpc } from '../lib/workload';

export interface ThroughputResult extends DeliveryRunResult {
  readonly processes: number;
  ratioToCeiling?: number;
}

/** What a caller adds to a run on the scenario's database: e.g. the server's counters (the peers scenario). */
export type RunExtras = (database: BenchDatabase) => Promise<Pick<DeliveryRun, 'counters' | 'settle'>>;

/**
 * Scenario 2 through WebhookPublisher.publishMany, in batches, with a CPU profile of the service unless `profile` is
 * false (the peers scenario compares rates: the profiler's sampling would cost the service alone).
 */
export async function throughputViaPublisher(
  context: BenchContext,
  { profile = true, measure }: { profile?: boolean; measure?: RunExtras } = {},
): Promise<{ result: ThroughputResult; profile?: ProfileSummary }> {
  const database = await context.server.create('throughput');
  const service = await startIpcService({ database: database.env, caFile: context.caFile }, context.logDir, 'throughput-publisher');
  try {
    await context.receiver.call('setSecrets', await enableWebhooks(service.base, context.size.users, context.bases));
    await context.receiver.call('reset');
    const events = benchEvents(0, context.size.events, context.size.users);
    const profileFile = join(context.profileDir, 'throughput.cpuprofile');
    await service.ipc.call('queryCounts', true);
    if (profile) await service.ipc.call('startProfile');
    const run = await measureDeliveryRun(context, {
      ...(await measure?.(database)),
      label: 'throughput (publisher API)',
      expected: events.length,
      pids: () => ({
        services: [service.ipc.process.pid!],
        receiver: [context.receiver.process.pid!],
        driver: [process.pid],
        database: databaseServerPids(),
      }),
      publish: () => publishViaIpc(service.ipc, events, context.size.batchSize),
      diagnose: () => deliveryStates(database),
    });
    if (!profile) return { result: { processes: 1, ...run } };
    await service.ipc.call('stopProfile', profileFile);
    return { result: { processes: 1, ...run }, profile: summarizeProfile(profileFile) };
  } finally {
    await service.stop();
    await database.drop();
  }
}

/** Scenario 2 through the internal HTTP endpoint of `processes` × `node dist/service/main.js` on one database (scenario 5). */
export async function throughputViaHttp(
  context: BenchContext,
  processes: number,
  { measure }: { measure?: RunExtras } = {},
): Promise<ThroughputResult> {
  const database = await context.server.create(`scale${processes}`);
  const instances: MainProcess[] = [];
  try {
    for (let i = 0; i < processes; i++)
      instances.push(
        await startMainProcess({ database: database.env, caFile: context.caFile }, context.logDir, `http-${processes}p-${i + 1}`),
      );
    await context.receiver.call('setSecrets', await enableWebhooks(instances[0].base, context.size.users, context.bases));
    await context.receiver.call('reset');
    const events = benchEvents(0, context.size.events, context.size.users);
    const run = await measureDeliveryRun(context, {
      ...(await measure?.(database)),
      label: `throughput (internal HTTP, ${processes} process(es))`,
      expected: events.length,
      pids: () => ({
        services: instances.map((instance) => instance.child.pid!),
        receiver: [context.receiver.process.pid!],
        driver: [process.pid],
        database: databaseServerPids(),
      }),
      publish: () =>
        publishViaHttp(
          instances.map((instance) => instance.base),
          events,
          context.size.batchSize,
        ),
      diagnose: () => deliveryStates(database),
    });
    return { processes, ...run };
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await database.drop();
  }
}
