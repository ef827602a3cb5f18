// Peer: pg-boss (jobs in PostgreSQL, each state change committed as PostgreSQL commits by default). One job per delivery;
// `localConcurrency` workers each fetch `batchSize` jobs and send them at once, so at most `concurrency` requests are
// in flight; each job is settled by its own answer (`perJobResults`). A worker fetches again at once while its fetches
// come back full (`burstWhenBatchFull`), and inserts wake idle workers (LISTEN/NOTIFY): pg-boss's own ways to keep a
// busy queue moving. The process of its own: `IpcChild.fork` by the peers scenario.
import { PgBoss } from 'pg-boss';
import type { PeerJob } from './peer-types';
import { servePeer } from './serve-peer';
import { succeeded } from './webhook-post';

const QUEUE = 'webhook-deliveries';
/** Jobs per fetch (and per completion statement); workers are `concurrency / BATCH`. */
const BATCH = 8;

servePeer(async (input, poster) => {
  const boss = new PgBoss({ connectionString: input.url, useListenNotify: true });
  boss.on('error', (error: Error) => process.stderr.write(`pg-boss: ${error.message}\n`));
  await boss.start();
  await boss.createQueue(QUEUE, { notify: true });
  const settings = {
    batchSize: BATCH,
    localConcurrency: Math.max(1, Math.floor(input.concurrency / BATCH)),
    burstWhenBatchFull: true,
    pollingIntervalSeconds: 0.5,
    perJobResults: true,
  } as const;
  await boss.work<PeerJob>(QUEUE, settings, (jobs) =>
    Promise.all(
      jobs.map(async (job) => {
        try {
          const result = await poster.post(job.data, job.retryCount + 1);
          return { id: job.id, status: succeeded(result) ? 'completed' : 'failed', output: { statusCode: result.statusCode } } as const;
        } catch (error) {
          return { id: job.id, status: 'failed', output: { error: (error as Error).message } } as const;
        }
      }),
    ),
  );
  return {
    publish: async (jobs) => {
      await boss.insert(
        QUEUE,
        jobs.map((data) => ({ data })),
      );
    },
    outcome: async () => {
      const { rows } = await boss
        .getDb()
        .executeSql('SELECT state, count(*)::int AS n FROM pgboss.job WHERE name = $1 GROUP BY state', [QUEUE]);
      const count = (state: string) => (rows as { state: string; n: number }[]).find((row) => row.state === state)?.n ?? 0;
      return { done: count('completed'), failed: count('failed'), settings };
    },
    close: () => boss.stop({ graceful: true }),
  };
});
