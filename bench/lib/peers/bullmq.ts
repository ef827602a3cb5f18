// Peer: BullMQ (jobs in Redis, kept as the server keeps its data). One job per delivery, added in bulk; one Worker
// with `concurrency` jobs at once, each completed (moved to the completed set, its answer's status as its return
// value) by BullMQ's own script, which fetches the next job in the same round trip. The process of its own:
// `IpcChild.fork` by the peers scenario.
import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import type { PeerJob } from './peer-types';
import { servePeer } from './serve-peer';
import { succeeded } from './webhook-post';

servePeer(async (input, poster) => {
  const url = new URL(input.url);
  // Workers need `maxRetriesPerRequest: null` (blocking commands); a prefix of its own keeps the run's keys apart.
  const connection = { host: url.hostname, port: Number(url.port || 6379), maxRetriesPerRequest: null };
  const prefix = `bench-peers-${randomBytes(4).toString('hex')}`;
  const name = 'webhook-deliveries';
  const queue = new Queue<PeerJob>(name, { connection, prefix });
  const settings = { concurrency: input.concurrency };
  const worker = new Worker<PeerJob>(
    name,
    async (job) => {
      const result = await poster.post(job.data, job.attemptsMade + 1);
      if (!succeeded(result)) throw new Error(`receiver answered ${result.statusCode}`);
      return { statusCode: result.statusCode };
    },
    { connection, prefix, ...settings },
  );
  worker.on('error', (error) => process.stderr.write(`bullmq: ${error.message}\n`));
  await worker.waitUntilReady();
  return {
    publish: async (jobs) => {
      await queue.addBulk(jobs.map((data) => ({ name: 'webhook', data })));
    },
    outcome: async () => {
      const counts = await queue.getJobCounts('completed', 'failed');
      return { done: counts.completed ?? 0, failed: counts.failed ?? 0, settings };
    },
    close: async () => {
      await worker.close();
      await queue.obliterate({ force: true });
      await queue.close();
    },
  };
});
