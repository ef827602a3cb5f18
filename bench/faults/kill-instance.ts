import { sleep, wallMs } from '../lib/clock';
import type { DatabaseServer } from '../lib/databases';
import type { ReceiverStats } from '../lib/receiver-types';
import { type MainProcess, type ServiceEnvInput, startMainProcess } from '../lib/services';
import { benchEvents, enableWebhooks } from '../lib/workload';
import {
  type DeliveryRow,
  type FaultRun,
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
 * kill -9 one of three `node dist/service/main.js` instances while they deliver, restart it: once its leases
 * expire the minute scheduler of any instance sends what it held. Lost must be 0. An attempt the killed
 * instance sent but had not recorded is sent again (at least once): in flight at the kill, or answered and
 * waiting for its record's commit (a slot is freed when the answer arrives, before the record). Those are
 * read from the database and the receiver after the kill; they must be the only events received twice, and
 * none of them three times.
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
    let restarted: Promise<void> | undefined;
    // Once 30% are delivered, the victim is killed right after it accepts a batch: it then holds that
    // batch's fresh leases (and attempts in flight), which only lease expiry can hand to another instance.
    const afterPublish = async (base: string) => {
      if (restarted || base !== instances[victim].base) return;
      const before = await run.receiver.call<ReceiverStats>('stats');
      if (before.uniqueEvents < size.events * 0.3) return;
      restarted = killAndRestart(before.uniqueEvents);
    };
    const killAndRestart = async (deliveredBefore: number) => {
      live.delete(victim);
      await instances[victim].kill9();
      killedAt = wallMs();
      const leasedAtKill = await leasedDeliveries(run);
      await sleep(1000);
      sentUnrecorded = await stillSentUnrecorded(run, leasedAtKill);
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
    if (!restarted) run.problems.push('the run ended before the kill');
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
    if (sentThrice.length > 0)
      run.problems.push(
        `${sentThrice.length} events sent unrecorded by the killed instance went out 3 times or more (e.g. ${timeline(sentThrice[0])})`,
      );
    return {
      scenario: 'kill -9 one of three instances mid-run, restart it',
      events: size.events,
      acknowledged: acknowledged.size,
      deliveryRows: delivered.deliveryRows,
      republishedBatches: retriedBatches,
      leaseMs: size.leaseMs,
      recoveredWithinMs: Math.round(wallMs() - killedAt),
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
