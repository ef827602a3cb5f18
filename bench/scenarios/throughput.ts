import { join } from 'node:path';
import { wallMs } from '../lib/clock';
import { deliveryStates } from '../lib/delivery-states';
import { type BenchContext, checkDelivery, type DeliveryCheck, round } from '../lib/context';
import { cpuMs, cpuSnapshot, type CpuUsage, cpuUsage, databaseServerPids } from '../lib/cpu';
import { summarizeProfile, type ProfileSummary } from '../lib/profile-summary';
import { type MainProcess, startIpcService, startMainProcess } from '../lib/services';
import { benchEvents, enableWebhooks, publishViaHttp, publishViaIpc, waitForEvents } from '../lib/workload';

export interface ThroughputResult extends DeliveryCheck {
  readonly processes: number;
  /** Time to get every publish call accepted (outbox committed). */
  readonly publishMs: number;
  /** First publish call to the last 2xx at the receiver. */
  readonly durationMs: number;
  readonly deliveriesPerSecond: number;
  ratioToCeiling?: number;
  /** From the first publish call to the last delivery (scale-out runs). */
  readonly cpu?: CpuUsage;
  /** CPU time per delivered event of each process group (ms), over the same window. */
  readonly cpuMsPerEvent?: Record<string, number>;
}

/** Scenario 2 through WebhookPublisher.publishMany, in batches, with a CPU profile of the service. */
export async function throughputViaPublisher(context: BenchContext): Promise<{ result: ThroughputResult; profile: ProfileSummary }> {
  const database = await context.server.create('throughput');
  const service = await startIpcService({ database: database.env, caFile: context.caFile }, context.logDir, 'throughput-publisher');
  try {
    await context.receiver.call('setSecrets', await enableWebhooks(service.base, context.size.users, context.bases));
    await context.receiver.call('reset');
    const events = benchEvents(0, context.size.events, context.size.users);
    const profileFile = join(context.profileDir, 'throughput.cpuprofile');
    await service.ipc.call('startProfile');
    const startedAt = wallMs();
    const queued = await publishViaIpc(service.ipc, events, context.size.batchSize);
    const publishMs = wallMs() - startedAt;
    const stats = await waitForEvents(context.receiver, queued, () => deliveryStates(database));
    await service.ipc.call('stopProfile', profileFile);
    const check = checkDelivery(context, 'throughput (publisher API)', stats, events.length);
    const durationMs = stats.lastOkAt - startedAt;
    const result = {
      processes: 1,
      ...check,
      publishMs: round(publishMs),
      durationMs: round(durationMs),
      deliveriesPerSecond: round((check.delivered * 1000) / durationMs),
    };
    return { result, profile: summarizeProfile(profileFile) };
  } finally {
    await service.stop();
    await database.drop();
  }
}

/** Scenario 2 through the internal HTTP endpoint of `processes` × `node dist/main.js` on one database (scenario 5). */
export async function throughputViaHttp(context: BenchContext, processes: number): Promise<ThroughputResult> {
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
    const pids = {
      services: instances.map((instance) => instance.child.pid!),
      receiver: [context.receiver.process.pid!],
      driver: [process.pid],
      database: databaseServerPids(),
    };
    const cpuBefore = cpuSnapshot(pids);
    const startedAt = wallMs();
    const queued = await publishViaHttp(
      instances.map((instance) => instance.base),
      events,
      context.size.batchSize,
    );
    const publishMs = wallMs() - startedAt;
    const stats = await waitForEvents(context.receiver, queued, () => deliveryStates(database));
    const cpuAfter = cpuSnapshot(pids);
    const check = checkDelivery(context, `throughput (internal HTTP, ${processes} process(es))`, stats, events.length);
    const perEvent = Object.entries(cpuMs(cpuBefore, cpuAfter)).map(([name, ms]) => [name, round(ms / Math.max(1, check.delivered), 3)]);
    const durationMs = stats.lastOkAt - startedAt;
    return {
      processes,
      ...check,
      publishMs: round(publishMs),
      durationMs: round(durationMs),
      deliveriesPerSecond: round((check.delivered * 1000) / durationMs),
      cpu: cpuUsage(cpuBefore, cpuAfter),
      cpuMsPerEvent: Object.fromEntries(perEvent),
    };
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await database.drop();
  }
}
