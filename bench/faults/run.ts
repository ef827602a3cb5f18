// `npm run test:faults`: crash safety of issue 4 on MariaDB, against `node dist/service/main.js` instances with the
// real minute scheduler (retries and lease recovery happen at the next minute boundary, so each scenario
// lasts one to two scheduler periods; the three run side by side on their own databases and receivers),
// then the noisy neighbour and the hung database of issue 11, each alone (they measure latency and answer
// times, so they do not share the machine with the others).
// `--only=kill-instance,kill-connections,receiver-faults,noisy-neighbour,hung-database` runs a subset.
// Prints one JSON document, writes bench/results/faults-latest.json, exits 1 on any problem.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_MYSQL_URL, databaseServer } from '../lib/databases';
import { RESULTS_DIR } from '../lib/paths';
import { hungDatabase } from './hung-database';
import { killConnections } from './kill-connections';
import { killInstance } from './kill-instance';
import { noisyNeighbour } from './noisy-neighbour';
import { receiverFaults } from './receiver-faults';

const LEASE_MS = 20_000;
const SCENARIOS = ['kill-instance', 'kill-connections', 'receiver-faults', 'noisy-neighbour', 'hung-database'] as const;
type Scenario = (typeof SCENARIOS)[number];

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const number = (name: string, fallback: number) => Number(argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
  const events = number('events', 6000);
  const only = new Set(
    argv
      .find((arg) => arg.startsWith('--only='))
      ?.slice('--only='.length)
      .split(',') ?? SCENARIOS,
  );
  const unknown = [...only].filter((name) => !SCENARIOS.includes(name as Scenario));
  if (unknown.length > 0) throw new Error(`unknown scenario(s) ${unknown.join(', ')}; choose from ${SCENARIOS.join(', ')}`);
  const server = await databaseServer(process.env.TEST_MYSQL_URL ?? DEFAULT_MYSQL_URL, true);
  const startedAt = Date.now();
  const settle = <T>(work: Promise<T>) =>
    work.catch((error: unknown) => ({ problems: [`aborted: ${(error as Error).stack ?? String(error)}`] }));
  const when = <T>(name: Scenario, work: () => Promise<T>) => (only.has(name) ? settle(work()) : undefined);
  const [killed, connections, receiver] = await Promise.all([
    when('kill-instance', () => killInstance(server, { users: 600, events: events * 3, leaseMs: LEASE_MS, concurrency: 64 })),
    when('kill-connections', () => killConnections(server, { users: 300, events: Math.round(events / 2), leaseMs: LEASE_MS })),
    when('receiver-faults', () => receiverFaults(server, { users: 200, events: Math.round(events / 3) })),
  ]);
  const neighbour = await when('noisy-neighbour', () => noisyNeighbour(server, { users: 50, seconds: 20, neighbourEvents: 1000 }));
  const hung = await when('hung-database', () =>
    hungDatabase(server, {
      users: 200,
      beforeMs: 5000,
      hangMs: 15_000,
      afterMs: 10_000,
      publishers: 4,
      batchSize: 10,
      intervalMs: 100,
      leaseMs: LEASE_MS,
    }),
  );
  const scenarios = {
    killInstance: killed,
    killConnections: connections,
    receiverFaults: receiver,
    noisyNeighbour: neighbour,
    hungDatabase: hung,
  };
  const problems = Object.entries(scenarios).flatMap(([name, result]) =>
    result ? result.problems.map((problem) => `${name}: ${problem}`) : [],
  );
  const report = {
    startedAt: new Date(startedAt).toISOString(),
    durationS: Math.round((Date.now() - startedAt) / 1000),
    leaseMs: LEASE_MS,
    scenarios,
    passed: problems.length === 0,
    problems,
  };
  const json = JSON.stringify(report, null, 2);
  writeFileSync(join(RESULTS_DIR, 'faults-latest.json'), `${json}\n`);
  process.stdout.write(`${json}\n`);
  process.exit(problems.length === 0 ? 0 : 1);
}

main().catch((error: unknown) => {
  process.stderr.write(`${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
