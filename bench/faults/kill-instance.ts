import { DEFAULT_WEBHOOK_TIMEOUT_MS } from '../../src/notifications/delivery/http/webhook-sender';
import { partitionLeaseMs } from '../../src/notifications/delivery/partitions/partition-ownership';
import { partitionOf } from '../../src/notifications/delivery/partitions/partitions';
import { sleep, wallMs } from '../lib/clock';
import type { DatabaseServer } from '../lib/databases';
import type { ReceiverStats } from '../lib/receiver-types';
import { type MainProcess, type ServiceEnvInput, startMainProcess } from '../lib/services';
import { benchEvents, enableWebhooks, userOfEvent } from '../lib/workload';
import {
  type AttemptsByEvent,
  type DeliveryRow,
  type FaultRun,
  queryRows,
  checkAllDelivered,
  deliveryRows,
  duplicatesOf,
  publishClosedLoop,
  receivedAttempts,
  startFaultRun,
  waitForAllDelivered,
} from './fault-kit';

export interface KillInstanceSize {
  readonly users: number;
  readonly events: number;
  readonly leaseMs: number;
  readonly concurrency: number;
}

/**
 * Three `node dist/service/main.js` instances deliver while each is restarted in turn (SIGTERM: a rolling deploy, its
 * partitions handed back as its attempts end), then one of them is killed (kill -9) and restarted: once its partition
 * and delivery leases end, the others send what it held. Lost must be 0. An attempt the killed instance sent but had
 * not recorded is sent again (at least once): in flight at the kill, or answered and waiting for its record's commit (a
 * slot is freed when the answer arrives, before the record). Those are read from the database and the receiver after
 * the kill; they must be the only events received twice (the rolling restart sends nothing twice), and none of them
 * three times. The killed instance's partitions must deliver again within a partition lease plus 5 s of the kill.
 */
export async function killInstance(server: DatabaseServer, size: KillInstanceSize) {
  const run = await startFaultRun(server, 'kill-9');
  const instances: MainProcess[] = [];
  try {
    const input: ServiceEnvInput = {
      database: run.database.env,
      caFile: run.caFile,
      delivery: { leaseMs: size.leaseMs, concurrency: size.concurrency },
    };
    for (let i = 0; i < 3; i++) instances.push(await startMainProcess(input, run.logDir, `instance-${i + 1}`));
    await run.receiver.call('setSecrets', await enableWebhooks(instances[0].base, size.users, run.bases));
    const live = new Set([0, 1, 2]);
    let turn = 0;
    const pick = () => {
      const alive = [...live];
      return instances[alive[turn++ % alive.length]].base;
    };
    const victim = 1;
    let killedAt = 0;
    let sentUnrecorded = new Set<string>();
    /** The killed instance's partitions, each with its lease's end (epoch ms). */
    let victimLeases = new Map<number, number>();
    let rolling: Promise<number[]> | undefined;
    let rolled = false;
    let restarted: Promise<void> | undefined;
    // Once 10% are delivered, each instance in turn is stopped (SIGTERM) and started again, the others taking the
    // publishes meanwhile.
    const rollingRestart = async () => {
      const tookMs: number[] = [];
      for (let index = 0; index < instances.length; index++) {
        const from = wallMs();
        live.delete(index);
        await instances[index].stop();
        const port = Number(new URL(instances[index].base).port);
        instances[index] = await startMainProcess(input, run.logDir, `instance-${index + 1}-rolled`, port);
        live.add(index);
        tookMs.push(Math.round(wallMs() - from));
      }
      run.log(`rolling restart done: ${tookMs.map((ms) => `${ms} ms`).join(', ')}`);
      rolled = true;
      return tookMs;
    };
    // Once the rolling restart is over and 30% are delivered, the victim is killed right after it accepts a batch: it
    // then holds that batch's fresh leases (and attempts in flight), which only lease expiry can hand to another instance.
    const afterPublish = async (base: string) => {
      const before = await run.receiver.call<ReceiverStats>('stats');
      if (!rolling && before.uniqueEvents >= size.events * 0.1) rolling = rollingRestart();
      if (!rolled || restarted || base !== instances[victim].base || before.uniqueEvents < size.events * 0.3) return;
      restarted = killAndRestart(before.uniqueEvents);
    };
    const killAndRestart = async (deliveredBefore: number) => {
      live.delete(victim);
      const holders = await partitionHolders(run);
      await instances[victim].kill9();
      killedAt = wallMs();
      const leasedAtKill = await leasedDeliveries(run);
      const silent = partitionsOfSilentHolder(run, holders);
      await sleep(1000);
      sentUnrecorded = await stillSentUnrecorded(run, leasedAtKill);
      victimLeases = await silent;
      run.log(
        `killed instance ${victim + 1} (kill -9) right after it accepted a batch, ${deliveredBefore} deliveries in, ` +
          `${sentUnrecorded.size} of its attempts sent and not recorded; restarting it`,
      );
      const port = Number(new URL(instances[victim].base).port);
      instances[victim] = await startMainProcess(input, run.logDir, `instance-${victim + 1}-restarted`, port);
      live.add(victim);
    };
    const { acknowledged, retriedBatches } = await publishClosedLoop({
      events: benchEvents(0, size.events, size.users),
      batchSize: 100,
      window: 300,
      receiver: run.receiver,
      pick,
      afterPublish,
    });
    if (!rolled) run.problems.push('the run ended before the rolling restart was over');
    if (!restarted) run.problems.push('the run ended before the kill');
    const restartsTookMs = await rolling;
    await restarted;
    run.log(
      `published ${acknowledged.size} events (${retriedBatches} batch(es) retried on another instance); waiting for lease expiry and the minute scheduler`,
    );
    const attempts = await waitForAllDelivered(run, acknowledged, size.leaseMs + 150_000);
    const delivered = await checkAllDelivered(run, acknowledged, attempts);
    const duplicates = duplicatesOf(attempts);
    // Each attempt the killed instance sent and never recorded goes out once more after its lease ends; any other
    // event received twice was sent by an instance that did not hold its lease.
    const copies = (eventId: string) => attempts.get(eventId)?.length ?? 0;
    const resentUnrecorded = [...sentUnrecorded].filter((eventId) => copies(eventId) === 2).length;
    const sentThrice = [...sentUnrecorded].filter((eventId) => copies(eventId) > 2);
    const unexplained = [...attempts.keys()].filter((eventId) => copies(eventId) > 1 && !sentUnrecorded.has(eventId));
    const timeline = (eventId: string) =>
      `${eventId}: ${attempts
        .get(eventId)!
        .map((attempt) => `attempt ${attempt.attempt} at ${Math.round(attempt.at - killedAt)} ms`)
        .join(', ')}`;
    if (unexplained.length > 0)
      run.problems.push(
        `${unexplained.length} events the killed instance had not sent unrecorded were sent more than once ` +
          `(times from the kill; e.g. ${unexplained.slice(0, 3).map(timeline).join('; ')})`,
      );
    const partitionsBack = deliveringAgain(attempts, new Set(victimLeases.keys()), killedAt, size.users);
    // Its leases ran at most one partition lease past the kill (the instances run the default timeout); the next owner
    // takes them at its first round after they end.
    const leasesEndedMs = Math.round(Math.max(0, ...victimLeases.values()) - killedAt);
    const partitionBoundMs = partitionLeaseMs({ timeoutMs: DEFAULT_WEBHOOK_TIMEOUT_MS }) + 5_000;
    if (victimLeases.size === 0) run.problems.push('the killed instance held no partition (or it could not be told apart)');
    if (partitionsBack.lastMs > partitionBoundMs)
      run.problems.push(
        `a partition of the killed instance delivered again ${partitionsBack.lastMs} ms after the kill (bound: a partition lease plus 5 s, ${partitionBoundMs} ms)`,
      );
    if (sentThrice.length > 0)
      run.problems.push(
        `${sentThrice.length} events sent unrecorded by the killed instance went out 3 times or more (e.g. ${timeline(sentThrice[0])})`,
      );
    return {
      scenario: 'rolling restart of three instances, then kill -9 one of them mid-run and restart it',
      events: size.events,
      acknowledged: acknowledged.size,
      deliveryRows: delivered.deliveryRows,
      republishedBatches: retriedBatches,
      leaseMs: size.leaseMs,
      restartsTookMs,
      killedPartitions: victimLeases.size,
      partitionsDeliveringAgainMs: {
        first: partitionsBack.firstMs,
        last: partitionsBack.lastMs,
        leasesEnded: leasesEndedMs,
        bound: partitionBoundMs,
      },
      allDeliveredAfterKillMs: Math.round(wallMs() - killedAt),
      lost: delivered.lost,
      notDelivered: delivered.notDelivered,
      duplicates,
      concurrency: size.concurrency,
      sentUnrecordedAtKill: sentUnrecorded.size,
      resentUnrecorded,
      otherDuplicates: unexplained.length,
      badSignatures: delivered.badSignatures,
      problems: run.problems,
    };
  } finally {
    await Promise.all(instances.map((instance) => instance.stop()));
    await run.close();
  }
}

/** The leases held right after the kill, each as `eventId leaseToken attemptCount`. */
async function leasedDeliveries(run: FaultRun): Promise<Set<string>> {
  const rows = await deliveryRows(run.database);
  return new Set(rows.filter((row) => row.status === 'PENDING' && row.lockedBy !== null).map(leaseKey));
}

/**
 * Of the leases held right after the kill, those still held unchanged a second later (the live instances record
 * within milliseconds; the killed one never will) whose attempt the receiver has: the events whose attempt the killed
 * instance sent and did not record, each of which is sent again once its lease ends.
 */
async function stillSentUnrecorded(run: FaultRun, leasedAtKill: ReadonlySet<string>): Promise<Set<string>> {
  const attempts = await receivedAttempts(run.receiver);
  const rows = await deliveryRows(run.database);
  const sent = rows.filter(
    (row) =>
      row.status === 'PENDING' &&
      leasedAtKill.has(leaseKey(row)) &&
      (attempts.get(row.eventId) ?? []).some((attempt) => attempt.attempt === row.attemptCount + 1),
  );
  return new Set(sent.map((row) => row.eventId));
}

function leaseKey(row: DeliveryRow): string {
  return `${row.eventId} ${row.lockedBy} ${row.attemptCount}`;
}

/** Each held partition's holder and lease end as the partitions table says, read right before the kill. */
async function partitionHolders(run: FaultRun): Promise<Map<number, { holder: string; until: number }>> {
  const rows = await queryRows<{ user_partition: number; holder: string; lease_until: number | string }>(
    run.database,
    'SELECT user_partition, holder, lease_until FROM webhook_partitions WHERE holder IS NOT NULL',
  );
  return new Map(rows.map((row) => [Number(row.user_partition), { holder: row.holder, until: Number(row.lease_until) }]));
}

/**
 * The partitions the killed instance held, with their lease ends: those of the one holder that stopped saying it is
 * alive (the others renew every 5 s), read 6 s after the kill.
 */
async function partitionsOfSilentHolder(
  run: FaultRun,
  holders: ReadonlyMap<number, { holder: string; until: number }>,
): Promise<Map<number, number>> {
  const aliveUntil = () =>
    queryRows<{ holder: string; alive_until: number | string }>(run.database, 'SELECT holder, alive_until FROM webhook_delivery_instances');
  const before = new Map((await aliveUntil()).map((row) => [row.holder, Number(row.alive_until)]));
  await sleep(6_000);
  const silent = (await aliveUntil()).filter((row) => before.get(row.holder) === Number(row.alive_until)).map((row) => row.holder);
  if (silent.length !== 1) return new Map();
  return new Map([...holders].filter(([, lease]) => lease.holder === silent[0]).map(([partition, lease]) => [partition, lease.until]));
}

/**
 * When the killed instance's partitions delivered again: per partition, the first attempt received after the kill for
 * one of its users; the earliest and the latest of those, from the kill.
 */
function deliveringAgain(
  attempts: AttemptsByEvent,
  partitions: ReadonlySet<number>,
  killedAt: number,
  users: number,
): { firstMs: number | null; lastMs: number } {
  const firstAfterKill = new Map<number, number>();
  for (const list of attempts.values())
    for (const attempt of list) {
      if (attempt.seq === null || attempt.at < killedAt) continue;
      const partition = partitionOf(userOfEvent(attempt.seq, users));
      if (partitions.has(partition)) firstAfterKill.set(partition, Math.min(firstAfterKill.get(partition) ?? Infinity, attempt.at));
    }
  const times = [...firstAfterKill.values()].map((at) => Math.round(at - killedAt));
  return { firstMs: times.length > 0 ? Math.min(...times) : null, lastMs: times.length > 0 ? Math.max(...times) : 0 };
}
