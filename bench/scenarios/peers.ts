// Issue 34's peers: the throughput workload (events for users, `concurrency` requests in flight, undici to the same
// receiver) delivered by pg-boss (PostgreSQL), BullMQ (Redis) and a design floor (our tables and durability in raw
// mysql2 on MariaDB), each in a process of its own, and by our engine (publishMany, the internal endpoint) in the same
// run, in rounds; targets as the median over the rounds of ratios within each round.
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { type BenchContext, round } from '../lib/context';
import { type DeliveryRunResult, measureDeliveryRun } from '../lib/delivery-run';
import { IpcChild } from '../lib/ipc';
import type { PeerInput, PeerOutcome } from '../lib/peers/peer-types';
import { floorStore, mariadbCounters, type PeerStore, postgresStore, redisStore, untilDelivered } from '../lib/peers/stores';
import type { Target } from '../lib/report';
import { typeOfUser } from '../lib/workload';
import { type RunExtras, throughputViaHttp, throughputViaPublisher, type ThroughputResult } from './throughput';

export interface PeerRunResult extends DeliveryRunResult, PeerOutcome {
  /** How the peer's store keeps what it is told, as read from the server. */
  readonly durability: Record<string, string>;
  ratioToCeiling?: number;
}

/** The five runs of one round, and their ratios. */
export interface PeersRound {
  readonly ours: { readonly publishMany: ThroughputResult; readonly internalHttp: ThroughputResult };
  readonly pgBoss: PeerRunResult;
  readonly bullmq: PeerRunResult;
  readonly floor: PeerRunResult;
  /** Ours ÷ each peer, deliveries per second. */
  readonly ratios: Record<string, number>;
}

export interface PeersResult {
  readonly rounds: readonly PeersRound[];
  /** Each ratio's median over the rounds: the machine's speed drifts between runs, more than our builds differ. */
  readonly ratios: Record<string, number>;
  readonly targets: Record<string, Target>;
}

type Peer = 'pg-boss' | 'bullmq' | 'floor';

/**
 * `size.peerRounds` rounds of five runs, the peers between our two; throws one line when PostgreSQL, Redis or MariaDB is
 * missing.
 */
export async function peers(context: BenchContext, log: (message: string) => void): Promise<PeersResult> {
  if (context.server.kind !== 'mysql')
    throw new Error('peers needs MariaDB/MySQL (TEST_MYSQL_URL) for our engine and the floor; the bench fell back to SQLite');
  // Both answer before anything runs: a missing server fails the scenario at once, not after minutes of runs.
  await (await postgresStore()).drop();
  await (await redisStore()).drop();
  const rounds: PeersRound[] = [];
  for (let n = 1; n <= context.size.peerRounds; n++) {
    log(`peers: round ${n} of ${context.size.peerRounds}`);
    const result = await peersRound(context, log);
    log(`peers: round ${n} ratios ${JSON.stringify(result.ratios)}`);
    rounds.push(result);
  }
  const ratios = Object.fromEntries(Object.keys(rounds[0].ratios).map((name) => [name, median(rounds.map((r) => r.ratios[name]))]));
  const target = (value: number, atLeast: number): Target => ({ ratio: value, atLeast, met: value >= atLeast });
  return {
    rounds,
    ratios,
    targets: {
      peersPublishManyAtLeast12xPgBoss: target(ratios.publishManyToPgBoss, 1.2),
      peersInternalHttpAtLeast12xPgBoss: target(ratios.internalHttpToPgBoss, 1.2),
      peersPublishManyAtLeast09xFloor: target(ratios.publishManyToFloor, 0.9),
      peersInternalHttpAtLeast09xFloor: target(ratios.internalHttpToFloor, 0.9),
    },
  };
}

async function peersRound(context: BenchContext, log: (message: string) => void): Promise<PeersRound> {
  const { size } = context;
  // MariaDB's counters over our runs, read again once every record is committed (as the peers' once every job is done).
  const counting: RunExtras = async (database) => {
    const store = await mariadbCounters(database.url!);
    return { counters: () => store.counters(), settle: () => untilDelivered(database.url!, size.events) };
  };

  log(`peers: our engine, ${size.events} events for ${size.users} users through publishMany`);
  const { result: publishMany } = await throughputViaPublisher(context, { profile: false, measure: counting });
  log(`peers (ours, publishMany): ${publishMany.deliveriesPerSecond}/s`);
  const pgBoss = await peerRun(context, 'pg-boss', await postgresStore(), log);
  const floor = await peerRun(context, 'floor', await floorStore((label) => context.server.create(label)), log);
  const bullmq = await peerRun(context, 'bullmq', await redisStore(), log);
  log('peers: our engine through the internal endpoint');
  const internalHttp = await throughputViaHttp(context, 1, { measure: counting });
  log(`peers (ours, internal HTTP): ${internalHttp.deliveriesPerSecond}/s`);

  const ratio = (ours: { deliveriesPerSecond: number }, peer: { deliveriesPerSecond: number }) =>
    round(ours.deliveriesPerSecond / peer.deliveriesPerSecond, 3);
  const ratios = {
    publishManyToPgBoss: ratio(publishMany, pgBoss),
    internalHttpToPgBoss: ratio(internalHttp, pgBoss),
    publishManyToFloor: ratio(publishMany, floor),
    internalHttpToFloor: ratio(internalHttp, floor),
    publishManyToBullmq: ratio(publishMany, bullmq),
    internalHttpToBullmq: ratio(internalHttp, bullmq),
  };
  return { ours: { publishMany, internalHttp }, pgBoss, bullmq, floor, ratios };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : round((sorted[middle - 1] + sorted[middle]) / 2, 3);
}

/** One peer in its own process (bench/lib/peers/<peer>.ts) on `store`, which it drops after. */
async function peerRun(context: BenchContext, peer: Peer, store: PeerStore, log: (message: string) => void): Promise<PeerRunResult> {
  const { size } = context;
  log(`peers: ${peer}, ${size.events} events for ${size.users} users`);
  const secrets: [string, string][] = Array.from({ length: size.users }, (_, i) => [
    `${i + 1}/${typeOfUser(i + 1)}`,
    `whsec_${randomBytes(32).toString('base64url')}`,
  ]);
  const child = IpcChild.fork(resolve(__dirname, `../lib/peers/${peer}.js`), peer);
  try {
    await context.receiver.call('setSecrets', secrets);
    await context.receiver.call('reset');
    await child.ready;
    const input: PeerInput = {
      url: store.url,
      bases: context.bases,
      caPem: context.caPem,
      secrets,
      users: size.users,
      events: size.events,
      batchSize: size.batchSize,
      concurrency: size.concurrency,
    };
    await child.call('prepare', input);
    const settled: { outcome?: PeerOutcome } = {};
    const run = await measureDeliveryRun(context, {
      label: `peers (${peer})`,
      expected: size.events,
      pids: () => ({ peer: [child.process.pid!], receiver: [context.receiver.process.pid!], driver: [process.pid], store: store.pids() }),
      publish: () => child.call<number>('run'),
      counters: () => store.counters(),
      settle: async () => void (settled.outcome = await child.call<PeerOutcome>('finish')),
    });
    const { done, failed, settings } = settled.outcome!;
    if (done < size.events) context.failures.push(`peers (${peer}): ${done} of ${size.events} jobs marked done (${failed} failed)`);
    log(`peers (${peer}): ${run.deliveriesPerSecond}/s; CPU per event ${JSON.stringify(run.cpuMsPerEvent)}`);
    return { ...run, done, failed, settings, durability: store.durability };
  } finally {
    await child.stop();
    await store.drop();
  }
}
