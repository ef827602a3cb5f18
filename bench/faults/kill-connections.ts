import { createConnection } from 'mysql2/promise';
import { sleep } from '../lib/clock';
import type { BenchDatabase, DatabaseServer } from '../lib/databases';
import type { ReceiverStats } from '../lib/receiver-types';
import { type MainProcess, startMainProcess } from '../lib/services';
import { benchEvents, enableWebhooks } from '../lib/workload';
import { checkAllDelivered, duplicatesOf, publishClosedLoop, startFaultRun, waitForAllDelivered } from './fault-kit';

export interface KillConnectionsSize {
  readonly users: number;
  readonly events: number;
  readonly leaseMs: number;
}

/** MariaDB `KILL`s every connection of the service (found by database name in the processlist) at 30% and 60%. */
export async function killConnections(server: DatabaseServer, size: KillConnectionsSize) {
  const run = await startFaultRun(server, 'db-kill');
  let instance: MainProcess | undefined;
  try {
    instance = await startMainProcess(
      { database: run.database.env, caFile: run.caFile, delivery: { leaseMs: size.leaseMs } },
      run.logDir,
      'instance',
    );
    await run.receiver.call('setSecrets', await enableWebhooks(instance.base, size.users, run.bases));
    const kills: { afterDeliveries: number; connections: number }[] = [];
    const killer = (async () => {
      for (const fraction of [0.3, 0.6]) {
        let uniqueEvents: number;
        while ((uniqueEvents = (await run.receiver.call<ReceiverStats>('stats')).uniqueEvents) < size.events * fraction) await sleep(20);
        const connections = await killServiceConnections(run.database);
        kills.push({ afterDeliveries: uniqueEvents, connections });
        run.log(`KILLed ${connections} connection(s) of the service after ${uniqueEvents} deliveries`);
      }
    })();
    const base = instance.base;
    const { acknowledged, retriedBatches } = await publishClosedLoop({
      events: benchEvents(0, size.events, size.users),
      batchSize: 200,
      window: 600,
      receiver: run.receiver,
      pick: () => base,
    });
    await killer;
    run.log(`published ${acknowledged.size} events (${retriedBatches} batch(es) retried); waiting for every delivery`);
    const attempts = await waitForAllDelivered(run, acknowledged, size.leaseMs + 150_000);
    const delivered = await checkAllDelivered(run, acknowledged, attempts);
    const serviceAlive = instance.child.exitCode === null && instance.child.signalCode === null;
    if (!serviceAlive) run.problems.push('the service exited after its connections were killed');
    if (kills.some((kill) => kill.connections === 0)) run.problems.push('found no service connection to kill');
    return {
      scenario: 'MariaDB KILL of the service connections, twice, mid-run',
      events: size.events,
      acknowledged: acknowledged.size,
      deliveryRows: delivered.deliveryRows,
      republishedBatches: retriedBatches,
      kills,
      lost: delivered.lost,
      notDelivered: delivered.notDelivered,
      duplicates: duplicatesOf(attempts),
      badSignatures: delivered.badSignatures,
      serviceAlive,
      problems: run.problems,
    };
  } finally {
    await instance?.stop();
    await run.close();
  }
}

async function killServiceConnections(database: BenchDatabase): Promise<number> {
  const admin = await createConnection({ uri: database.url! });
  try {
    const [rows] = await admin.query('SELECT id FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()', [
      database.name,
    ]);
    const ids = (rows as { id: number }[]).map((row) => Number(row.id));
    for (const id of ids) await admin.query(`KILL ${id}`).catch(() => undefined);
    return ids.length;
  } finally {
    await admin.end();
  }
}
