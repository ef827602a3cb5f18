// `npm run bench [-- --quick] [-- --only=throughput,latency,spread-latency,backlog,scale-out,isolation,isolation-http,recovery,endpoint-limits,peers,dns-flood,coordination]`:
// the delivery benchmark of issue 4, the isolation scenario of issue 11, whether the per-endpoint limits hold across
// instances, our engine against pg-boss, BullMQ and a design floor on the same workload (issue 34), and whether a user
// saving host names whose DNS never answers slows anyone else down (issue 36).
// Prints one JSON document on stdout (progress goes to stderr) and writes bench/results/latest.json.
// Exits 1 when a delivery had a bad signature or an event was lost.
import { cpus, loadavg, totalmem } from 'node:os';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type BenchContext, type BenchSize, round } from './lib/context';
import { DEFAULT_MYSQL_URL, databaseServer } from './lib/databases';
import { IpcChild } from './lib/ipc';
import { RESULTS_DIR } from './lib/paths';
import type { ReceiverStart } from './lib/receiver-types';
import type { BenchReport, RatedRun, Target } from './lib/report';
import { backlog } from './scenarios/backlog';
import { ANSWERED_ZONE, dnsFlood } from './scenarios/dns-flood';
import { measureCeiling } from './scenarios/ceiling';
import { endpointLimits } from './scenarios/endpoint-limits';
import { isolation } from './scenarios/isolation';
import { latency } from './scenarios/latency';
import { peers } from './scenarios/peers';
import { recovery } from './scenarios/recovery';
import { spreadLatency } from './scenarios/spread-latency';
import { coordination } from './scenarios/coordination';
import { throughputViaHttp, throughputViaPublisher, type ThroughputResult } from './scenarios/throughput';

/** The receiver's answer delay in the second scale-out series. */
const SLOW_RECEIVER_MS = 50;
const SCENARIOS = [
  'throughput',
  'latency',
  'spread-latency',
  'backlog',
  'scale-out',
  'isolation',
  'isolation-http',
  'recovery',
  'endpoint-limits',
  'peers',
  'dns-flood',
  'coordination',
] as const;
type Scenario = (typeof SCENARIOS)[number];

const FULL: BenchSize = {
  users: 2000,
  events: 20_000,
  batchSize: 500,
  concurrency: 64,
  latencyRate: 200,
  latencySeconds: 30,
  backlog: 100_000,
  scaleOut: [1, 2, 3],
  isolation: { users: 200, seconds: 60, neighbourEvents: 2000, stragglerWaitSeconds: 30 },
  endpointLimits: { slowEvents: 300, deadSeconds: 40, deadRate: 10 },
  dnsFlood: { seconds: 15, rounds: 3, attackerRate: 4 },
  peerRounds: 3,
};
const QUICK: BenchSize = {
  ...FULL,
  users: 500,
  events: 4000,
  latencySeconds: 10,
  backlog: 10_000,
  isolation: { ...FULL.isolation, seconds: 20 },
  endpointLimits: { ...FULL.endpointLimits, slowEvents: 150, deadSeconds: 20 },
  dnsFlood: { ...FULL.dnsFlood, seconds: 10, rounds: 2 },
  peerRounds: 1,
};
/** Publish to first attempt, p99, of lone events through three instances behind a load balancer that wake each other. */
const SPREAD_LONE_WOKEN_P99_MS = 50;
/** Under load, waking the owners may cost the p99 at most this much over polling alone. */
const SPREAD_LOADED_WOKEN_TO_POLLED_P99 = 1.5;

/** Receiver origins (127.0.0.1…N): users' endpoints are spread over several origins, as real users' are. */
const ORIGINS = 8;

const log = (message: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);

function parseArgs(argv: readonly string[]): { size: BenchSize; quick: boolean; only: Set<Scenario> } {
  const quick = argv.includes('--quick');
  const only = argv
    .find((arg) => arg.startsWith('--only='))
    ?.slice('--only='.length)
    .split(',') ?? [...SCENARIOS];
  const unknown = only.filter((name) => !SCENARIOS.includes(name as Scenario));
  if (unknown.length > 0) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; choose from ${SCENARIOS.join(', ')}`);
  const number = (name: string) => {
    const value = argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
    return value === undefined ? undefined : Number(value);
  };
  const base = quick ? QUICK : FULL;
  const isolation = {
    ...base.isolation,
    users: number('isolation-users') ?? base.isolation.users,
    seconds: number('isolation-seconds') ?? base.isolation.seconds,
    neighbourEvents: number('isolation-neighbour-events') ?? base.isolation.neighbourEvents,
  };
  const endpointLimits = {
    ...base.endpointLimits,
    slowEvents: number('endpoint-limits-slow-events') ?? base.endpointLimits.slowEvents,
    deadSeconds: number('endpoint-limits-dead-seconds') ?? base.endpointLimits.deadSeconds,
    deadRate: number('endpoint-limits-dead-rate') ?? base.endpointLimits.deadRate,
  };
  const dnsFlood = {
    seconds: number('dns-flood-seconds') ?? base.dnsFlood.seconds,
    rounds: number('dns-flood-rounds') ?? base.dnsFlood.rounds,
    attackerRate: number('dns-flood-attacker-rate') ?? base.dnsFlood.attackerRate,
  };
  const size = {
    ...base,
    events: number('events') ?? base.events,
    users: number('users') ?? base.users,
    backlog: number('backlog') ?? base.backlog,
    latencyRate: number('latency-rate') ?? base.latencyRate,
    latencySeconds: number('latency-seconds') ?? base.latencySeconds,
    latencyProfile: argv.includes('--latency-profile'),
    latencyIdleSeconds: number('latency-idle-seconds') ?? 5,
    peerRounds: number('peer-rounds') ?? base.peerRounds,
    isolation,
    endpointLimits,
    dnsFlood,
  };
  return { size, quick, only: new Set(only as Scenario[]) };
}

async function main(): Promise<void> {
  const { size, quick, only } = parseArgs(process.argv.slice(2));
  const resultsDir = RESULTS_DIR;
  const profileDir = join(resultsDir, 'profiles');
  const logDir = mkdtempSync(join(tmpdir(), 'nw-bench-logs-'));
  mkdirSync(profileDir, { recursive: true });
  const server = await databaseServer(process.env.TEST_MYSQL_URL ?? DEFAULT_MYSQL_URL, false);
  if (server.note) log(server.note);
  log(`database: ${server.kind}; service logs in ${logDir}`);

  const receiver = IpcChild.fork(resolve(__dirname, 'lib/receiver-process.js'), 'receiver');
  await receiver.ready;
  const caFile = join(logDir, 'receiver-ca.pem');
  const { bases, caPem } = await receiver.call<ReceiverStart>('start', ORIGINS, caFile, [`*.${ANSWERED_ZONE}`]);
  const context: BenchContext = { size, server, receiver, bases, caPem, caFile, logDir, profileDir, failures: [] };
  const report: BenchReport = {
    meta: {
      startedAt: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model,
      memoryGb: round(totalmem() / 1024 ** 3),
      loadAverageAtStart: loadavg().map((load) => round(load, 2)),
      database: server.kind,
      ...(server.note ? { note: server.note } : {}),
      quick,
      scenarios: [...only],
      size,
      receiverOrigins: ORIGINS,
      deliveryTuning: 'service defaults (DELIVERY_* unset); endpoint-limits sets its own (its settings)',
      serviceNodeOptions: process.env.BENCH_SERVICE_NODE_OPTIONS ?? null,
    },
  };
  const ratios: RatedRun[] = [];
  try {
    log(`ceiling: ${size.events} bare undici requests, concurrency ${size.concurrency}`);
    const ceilingBefore = await measureCeiling(context, 'ceiling');
    log(`ceiling: ${ceilingBefore.perSecond}/s`);
    const ceiling: NonNullable<BenchReport['ceiling']> = { ...ceilingBefore };
    report.ceiling = ceiling;

    if (only.has('throughput')) {
      log(`throughput: ${size.events} events for ${size.users} users through WebhookPublisher.publishMany`);
      const viaPublisher = await throughputViaPublisher(context);
      log(`throughput (publisher): ${viaPublisher.result.deliveriesPerSecond}/s`);
      log('throughput: the same through POST /api/v1/internal/notifications/events on node dist/service/main.js');
      const viaHttp = await throughputViaHttp(context, 1);
      log(`throughput (internal HTTP): ${viaHttp.deliveriesPerSecond}/s`);
      ratios.push(viaPublisher.result, viaHttp);
      report.throughput = { publisherApi: viaPublisher.result, internalHttp: viaHttp };
      if (viaPublisher.profile) report.profiles = { ...report.profiles, throughput: viaPublisher.profile };
    }
    if (only.has('latency')) {
      log(`latency: ${size.latencyRate} events/s for ${size.latencySeconds} s`);
      const result = await latency(context);
      log(`latency: p50 ${result.publishToReceiverMs.p50} ms, p99 ${result.publishToReceiverMs.p99} ms`);
      report.latency = result;
    }
    if (only.has('recovery')) {
      log(`recovery: the latency scenario alone, then while 10,000 FAILED deliveries are recovered`);
      const result = await recovery(context);
      log(`recovery: live p99 ${result.baselineP99Ms} ms alone, ${result.withRecoveryP99Ms} ms while recovering (×${result.p99Ratio})`);
      report.recovery = result;
    }
    if (only.has('backlog')) {
      log(`backlog: seeding ${size.backlog} due retries, then scheduler ticks`);
      const { result, profile } = await backlog(context);
      log(`backlog: ${result.deliveriesPerSecond}/s, peak RSS ${result.rssMb.peak} MB`);
      ratios.push(result);
      report.backlog = result;
      report.profiles = { ...report.profiles, backlog: profile };
    }
    if (only.has('scale-out')) {
      if (server.kind !== 'mysql') {
        report.scaleOut = { skipped: 'several instances need a shared MySQL/MariaDB database (SKIP LOCKED claims)' };
      } else {
        const runs: ThroughputResult[] = [];
        for (const processes of size.scaleOut) {
          log(`scale-out: ${size.events} events over ${processes} × node dist/service/main.js`);
          const run = await throughputViaHttp(context, processes);
          log(`scale-out ${processes}: ${run.deliveriesPerSecond}/s, ${run.duplicates} duplicates; CPU ${JSON.stringify(run.cpu)}`);
          runs.push(run);
        }
        ratios.push(...runs);
        // With a receiver answering at once, a single process can already keep this 2-core machine busy; with
        // receivers that take time (as real ones do) a process is bound by its attempts in flight, and more processes add capacity.
        await context.receiver.call('configure', { okDelayMs: SLOW_RECEIVER_MS });
        const slowRuns: ThroughputResult[] = [];
        try {
          for (const processes of [1, 2]) {
            log(
              `scale-out, receiver answering after ${SLOW_RECEIVER_MS} ms: ${size.events} events over ${processes} × node dist/service/main.js`,
            );
            const run = await throughputViaHttp(context, processes);
            log(
              `scale-out ${processes} (slow receiver): ${run.deliveriesPerSecond}/s, ${run.duplicates} duplicates; CPU ${JSON.stringify(run.cpu)}`,
            );
            slowRuns.push(run);
          }
        } finally {
          await context.receiver.call('configure', {});
        }
        report.scaleOut = { runs, slowReceiver: { answerDelayMs: SLOW_RECEIVER_MS, runs: slowRuns } };
      }
    }
    for (const path of ['publisher', 'http'] as const) {
      if (!only.has(path === 'http' ? 'isolation-http' : 'isolation')) continue;
      const result = await isolation(context, size.isolation, path);
      log(
        `isolation (${path}): healthy p99 ratio with a hanging neighbour ${result.ratios.hanging?.p99}, with a slow one ${result.ratios.slow?.p99}`,
      );
      if (path === 'http') report.isolationHttp = result;
      else report.isolation = result;
    }
    if (only.has('endpoint-limits')) {
      if (server.kind !== 'mysql') {
        report.endpointLimits = { skipped: 'several instances need a shared MySQL/MariaDB database (SKIP LOCKED claims)' };
      } else {
        report.endpointLimits = await endpointLimits(context, size.endpointLimits);
      }
    }
    if (only.has('spread-latency')) {
      if (server.kind !== 'mysql') report.spreadLatency = { skipped: 'several instances need a shared MySQL/MariaDB database' };
      else {
        log(`spread latency: lone events, then one every ${1000 / size.latencyRate} ms, through 3 instances in turn`);
        const result = await spreadLatency(context);
        for (const [name, pair] of [
          ['lone', result.lone],
          ['loaded', result.loaded],
        ] as const) {
          for (const [how, run] of [
            ['owners woken', pair.wakeUps],
            ['owners polling', pair.pollOnly],
          ] as const)
            log(
              `spread latency (${name}, ${pair.rate}/s): ${how} ${JSON.stringify(run.publishToReceiverMs)}; publish calls ${JSON.stringify(run.publishCallMs)}`,
            );
        }
        report.spreadLatency = result;
      }
    }
    if (only.has('peers')) {
      try {
        const result = await peers(context, log);
        log(`peers: ratios ${JSON.stringify(result.ratios)}`);
        for (const run of result.rounds) ratios.push(run.ours.publishMany, run.ours.internalHttp, run.pgBoss, run.bullmq, run.floor);
        report.peers = result;
      } catch (error) {
        // What the scenario needs (PostgreSQL, Redis, MariaDB), in one line: the run fails, the other scenarios still ran.
        const message = (error as Error).message;
        if (!message.startsWith('peers needs')) throw error;
        log(message);
        context.failures.push(message);
        report.peers = { failed: message };
      }
    }
    if (only.has('dns-flood')) {
      const { rounds, seconds, attackerRate } = size.dnsFlood;
      log(`dns-flood: ${rounds} rounds of ${seconds} s of victims alone, then ${seconds} s next to ${attackerRate} black-holed saves/s`);
      report.dnsFlood = await dnsFlood(context, size.dnsFlood);
      log(`dns-flood: victims' p99 ratios ${JSON.stringify(report.dnsFlood.ratios)}`);
    }
    if (only.has('coordination')) {
      if (server.kind !== 'mysql') report.coordination = { skipped: 'several instances need a shared MySQL/MariaDB database' };
      else report.coordination = await coordination(context, log);
    }
    if (!quick) {
      log('ceiling again, to see the drift within this run');
      const ceilingAfter = await measureCeiling(context, 'ceiling (end)');
      ceiling.perSecondAtEnd = ceilingAfter.perSecond;
    }
    const reference = Math.max(ceilingBefore.perSecond, ceiling.perSecondAtEnd ?? 0);
    ceiling.reference = reference;
    for (const result of ratios) result.ratioToCeiling = round(result.deliveriesPerSecond / reference, 3);
    report.targets = targets(report);
  } catch (error) {
    context.failures.push(`aborted: ${(error as Error).stack ?? String(error)}`);
  } finally {
    await receiver.stop();
  }
  report.meta.loadAverageAtEnd = loadavg().map((load) => round(load, 2));
  report.failures = context.failures;
  report.passed = context.failures.length === 0;
  const json = JSON.stringify(report, null, 2);
  writeFileSync(join(resultsDir, quick ? 'latest-quick.json' : 'latest.json'), `${json}\n`);
  process.stdout.write(`${json}\n`);
  process.exit(context.failures.length === 0 ? 0 : 1);
}

/**
 * What 0.6 × the ceiling leaves the service on this machine: the service, MariaDB, the receiver and the bench's
 * driver share its cores, and the ceiling's bare loop pays for neither a database nor a service. From the internal
 * HTTP run's CPU per event of each, and the ceiling's bare loop: the service's CPU per event at the target rate if
 * the others cost what they cost per event now, and the ratio the machine would allow a service that cost no more
 * per event than the bare loop does per request.
 */
function machineBudget(report: BenchReport) {
  const perEvent = report.throughput?.internalHttp.cpuMsPerEvent;
  const ceiling = report.ceiling;
  if (!perEvent || !ceiling?.reference) return undefined;
  const cores = cpus().length;
  const others = perEvent.database + perEvent.receiver + perEvent.driver;
  return {
    cores,
    cpuMsPerEvent: perEvent,
    bareLoopMsPerRequest: ceiling.cpu.msPerRequest.loop,
    serviceMsPerEventAt06: round((cores * 1000) / (0.6 * ceiling.reference) - others, 3),
    ratioIfServiceCostTheBareLoop: round((cores * 1000) / (ceiling.cpu.msPerRequest.loop + others) / ceiling.reference, 3),
  };
}

/** The targets of issue 4, held as ratios to the ceiling of this run. */
function targets(report: BenchReport): Record<string, Target> {
  const result: Record<string, Target> = {};
  const throughput = report.throughput?.publisherApi.ratioToCeiling;
  if (throughput !== undefined)
    result.throughputAtLeast06OfCeiling = { ratio: throughput, met: throughput >= 0.6, machineBudget: machineBudget(report) };
  if (report.throughput) {
    const { publisherApi, internalHttp } = report.throughput;
    const ratio = round(internalHttp.deliveriesPerSecond / publisherApi.deliveriesPerSecond, 3);
    result.throughputInternalHttpWithin10PercentOfPublisher = { ratio, met: ratio >= 0.9 };
  }
  const p99 = report.latency?.publishToReceiverMs.p99;
  if (p99 !== undefined) result.latencyP99AtMost15Ms = { p99, met: p99 <= 15 };
  const lone = report.latency?.perEvent?.serviceCpuMsPerEvent;
  const highRate = report.latency?.highRate;
  if (typeof lone === 'number' && highRate) {
    const ratio = round(lone / highRate.serviceCpuMsPerEvent, 2);
    result.latencyCpuPerEventWithin2xOfHighRate = {
      ratio,
      loneMs: lone,
      highRateMs: highRate.serviceCpuMsPerEvent,
      met: ratio <= 2,
      wakeFloor: report.latency?.wakeFloor,
    };
  }
  const backlogRatio = report.backlog?.ratioToCeiling;
  const peak = report.backlog?.rssMb.peak;
  if (backlogRatio !== undefined) result.backlogAtLeast03OfCeiling = { ratio: backlogRatio, met: backlogRatio >= 0.3 };
  if (peak !== undefined) result.backlogPeakRssAtMost300Mb = { peakMb: peak, met: peak <= 300 };
  const live = report.backlog?.liveHeapMb;
  if (live)
    result.backlogRetainsAtMost16Mb = {
      ...live,
      retainedMb: round(live.afterDrain - live.beforeTick),
      met: live.afterDrain - live.beforeTick <= 16,
    };
  const scaleOut = report.scaleOut && 'runs' in report.scaleOut ? report.scaleOut : undefined;
  const runs = scaleOut?.runs ?? [];
  if (scaleOut && runs.length >= 2) {
    result.scaleOutTwoBeatOne = {
      one: runs[0].deliveriesPerSecond,
      two: runs[1].deliveriesPerSecond,
      met: runs[1].deliveriesPerSecond > runs[0].deliveriesPerSecond,
    };
    const slowRuns = scaleOut.slowReceiver.runs;
    if (slowRuns.length >= 2) {
      result.scaleOutTwoBeatOneWithSlowReceiver = {
        one: slowRuns[0].deliveriesPerSecond,
        two: slowRuns[1].deliveriesPerSecond,
        met: slowRuns[1].deliveriesPerSecond > slowRuns[0].deliveriesPerSecond,
      };
    }
    const duplicates = [...runs, ...slowRuns].reduce((sum, run) => sum + run.duplicates, 0);
    result.scaleOutZeroDuplicates = { duplicates, met: duplicates === 0 };
  }
  if (report.recovery) {
    const { baselineP99Ms, withRecoveryP99Ms, p99Ratio, met } = report.recovery;
    result.recoveryLiveP99AtMost2xAlone = { baselineP99Ms, withRecoveryP99Ms, ratio: p99Ratio, met };
  }
  Object.assign(result, report.isolation?.targets, report.isolationHttp?.targets);
  if (report.endpointLimits && 'targets' in report.endpointLimits) Object.assign(result, report.endpointLimits.targets);
  const spread = report.spreadLatency && 'lone' in report.spreadLatency ? report.spreadLatency : undefined;
  if (spread) {
    // Woken, the owner starts what another instance published as it would its own, a wake-up later.
    const woken = spread.lone.wakeUps.publishToReceiverMs.p99;
    result.spreadLoneP99WithWakeUps = { p99: woken, met: woken <= SPREAD_LONE_WOKEN_P99_MS };
    // Not woken, it waits for the owner's next look (every second), at most.
    const polled = Math.max(spread.lone.pollOnly.publishToReceiverMs.p99, spread.loaded.pollOnly.publishToReceiverMs.p99);
    result.spreadLatencyP99Within1sPoll = { p99: polled, met: polled <= 1_100 };
    // Under load the owners drain all the time: the wake-ups must not cost much there.
    const { wakeUps, pollOnly } = spread.loaded;
    const ratio = round(wakeUps.publishToReceiverMs.p99 / pollOnly.publishToReceiverMs.p99, 2);
    result.spreadLoadedWokenP99AtMost15xPolled = { ratio, met: ratio <= SPREAD_LOADED_WOKEN_TO_POLLED_P99 };
  }
  if (report.peers && 'targets' in report.peers) Object.assign(result, report.peers.targets);
  Object.assign(result, report.dnsFlood?.targets);
  if (report.coordination && 'targets' in report.coordination) Object.assign(result, report.coordination.targets);
  return result;
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
