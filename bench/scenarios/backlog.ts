import { join } from 'node:path';
import { sleep, wallMs } from '../lib/clock';
import { deliveryStates } from '../lib/delivery-states';
import { type BenchContext, checkDelivery, type DeliveryCheck, round } from '../lib/context';
import { summarizeProfile, type ProfileSummary } from '../lib/profile-summary';
import { seedDueRetries } from '../lib/seed-backlog';
import type { MemorySample } from '../lib/service-types';
import { startIpcService } from '../lib/services';
import { enableWebhooks, waitForEvents } from '../lib/workload';

const MB = 1024 * 1024;

export interface BacklogResult extends DeliveryCheck {
  readonly dueRetries: number;
  readonly seedMs: number;
  readonly cronStartedBeforeTick: boolean;
  readonly drainMs: number;
  readonly deliveriesPerSecond: number;
  ratioToCeiling?: number;
  readonly rssMb: { beforeTick: number; peak: number; atQuarter: number; atHalf: number; atThreeQuarters: number; atEnd: number };
  readonly heapUsedMb: { peak: number; atHalf: number; atEnd: number };
  /** Heap in use after a full garbage collection, before the first tick and after the drain: what the drain retains. */
  readonly liveHeapMb: { beforeTick: number; afterDrain: number };
}

/** Scenario 4: `backlog` due retries already in the database, drained by scheduler ticks; RSS sampled every 100 ms. */
export async function backlog(context: BenchContext): Promise<{ result: BacklogResult; profile: ProfileSummary }> {
  const { backlog: count, users } = context.size;
  const database = await context.server.create('backlog');
  const service = await startIpcService({ database: database.env, caFile: context.caFile }, context.logDir, 'backlog');
  try {
    await context.receiver.call('setSecrets', await enableWebhooks(service.base, users, context.bases));
    // The service's own minute cron may start on the seeded rows; seed right after a minute boundary
    // and count from the receiver's first request if the cron came first.
    await context.receiver.call('reset');
    await sleep(61_000 - (Date.now() % 60_000));
    const seedStart = wallMs();
    await seedDueRetries(database, count, users);
    const seedMs = wallMs() - seedStart;
    const profileFile = join(context.profileDir, 'backlog.cpuprofile');
    const liveBefore = await service.ipc.call<NodeJS.MemoryUsage>('collectGarbage');
    await service.ipc.call('startSampling', 100);
    await service.ipc.call('startProfile');
    const tickAt = wallMs();
    let attempted = 0;
    while (attempted < count) {
      const claimed = await service.ipc.call<number>('tick');
      if (claimed === 0) break;
      attempted += claimed;
    }
    const stats = await waitForEvents(context.receiver, count, () => deliveryStates(database));
    const startedAt = Math.min(tickAt, stats.firstAt);
    const drainMs = stats.lastOkAt - startedAt;
    await service.ipc.call('stopProfile', profileFile);
    const samples = await service.ipc.call<MemorySample[]>('stopSampling');
    const liveAfter = await service.ipc.call<NodeJS.MemoryUsage>('collectGarbage');
    const check = checkDelivery(context, 'backlog', stats, count);
    const during = samples.filter((sample) => sample.at <= stats.lastOkAt);
    const rssAt = (fraction: number) => round(sampleAt(during, startedAt + fraction * drainMs).rss / MB);
    return {
      result: {
        ...check,
        dueRetries: count,
        seedMs: round(seedMs),
        cronStartedBeforeTick: stats.firstAt < tickAt,
        drainMs: round(drainMs),
        deliveriesPerSecond: round((check.delivered * 1000) / drainMs),
        rssMb: {
          beforeTick: round(samples[0].rss / MB),
          peak: round(Math.max(...samples.map((s) => s.rss)) / MB),
          atQuarter: rssAt(0.25),
          atHalf: rssAt(0.5),
          atThreeQuarters: rssAt(0.75),
          atEnd: rssAt(1),
        },
        liveHeapMb: { beforeTick: round(liveBefore.heapUsed / MB), afterDrain: round(liveAfter.heapUsed / MB) },
        heapUsedMb: {
          peak: round(Math.max(...samples.map((s) => s.heapUsed)) / MB),
          atHalf: round(sampleAt(during, startedAt + 0.5 * drainMs).heapUsed / MB),
          atEnd: round(sampleAt(during, stats.lastOkAt).heapUsed / MB),
        },
      },
      profile: summarizeProfile(profileFile),
    };
  } finally {
    await service.stop();
    await database.drop();
  }
}

function sampleAt(samples: readonly MemorySample[], at: number): MemorySample {
  return samples.reduce((best, sample) => (Math.abs(sample.at - at) < Math.abs(best.at - at) ? sample : best));
}
