/**
 * The simulation's command line (`npm run test:simulation -- …`):
 *   --seeds=N        run seeds 1..N (from --from=S), the default 200
 *   --seed=S         replay one seed, printing every step
 *   --steps=K        random steps per seed before the quiet phase (default 300)
 *   --strict         tolerate none of KNOWN_VIOLATIONS
 *   --survey         tolerate every invariant: list which seeds break which
 *   --invariants=a,b check only these; --skip=a,b check all but these
 *   --workers=W      processes running seeds at once (default: the CPUs, for 100 seeds or more)
 *   --mutation=M     run a deliberately broken engine or store (mutations.ts): lists the seeds where its invariant breaks
 */
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { INVARIANT_NAMES, type InvariantName, KNOWN_VIOLATIONS } from './invariants';
import { MUTATION_NAMES, type MutationName } from './mutations';
import {
  DEFAULT_STEPS,
  mergeSummaries,
  type RunChoices,
  type RunSummary,
  simulationOptions,
  type ToleratedSummary,
  runSeeds,
} from './run-seeds';

function main(): Promise<number> {
  const args = new Map(
    process.argv.slice(2).map((arg) => {
      const [key, value = 'true'] = arg.replace(/^--/, '').split('=');
      return [key, value] as const;
    }),
  );
  const known = new Set(['seeds', 'from', 'seed', 'steps', 'strict', 'survey', 'invariants', 'skip', 'workers', 'child', 'mutation']);
  for (const key of args.keys()) if (!known.has(key)) throw new Error(`unknown option --${key} (see test/simulation/run.ts)`);
  const list = (value: string | undefined) => (value ? (value.split(',').filter(Boolean) as InvariantName[]) : undefined);
  for (const name of [...(list(args.get('invariants')) ?? []), ...(list(args.get('skip')) ?? [])])
    if (!INVARIANT_NAMES.includes(name)) throw new Error(`unknown invariant ${name}; one of ${INVARIANT_NAMES.join(', ')}`);
  const common = {
    steps: Number(args.get('steps') ?? DEFAULT_STEPS),
    strict: args.has('strict'),
    survey: args.has('survey'),
    only: list(args.get('invariants')),
    skip: list(args.get('skip')),
    mutation: args.get('mutation') as MutationName | undefined,
  };
  if (common.mutation && !MUTATION_NAMES.includes(common.mutation))
    throw new Error(`unknown mutation ${common.mutation}; one of ${MUTATION_NAMES.join(', ')}`);
  if (args.has('seed')) return replay(Number(args.get('seed')), common);
  const from = Number(args.get('from') ?? 1);
  const count = Number(args.get('seeds') ?? 200);
  const seeds = Array.from({ length: count }, (_, i) => from + i);
  if (args.has('child')) return child(seeds, common);
  const workers = Number(args.get('workers') ?? (count >= 100 ? availableParallelism() : 1));
  return many(seeds, common, Math.max(1, Math.min(workers, Math.ceil(count / CHUNK))));
}

/** Seeds per child process. */
const CHUNK = 50;

/** A worker process: runs its seeds and sends the summary to the parent. */
async function child(seeds: number[], common: RunChoices): Promise<number> {
  const summary = await runSeeds(seeds, common);
  await new Promise<void>((resolve) => process.send!({ ...summary, tolerated: [...summary.tolerated] }, () => resolve()));
  return 0;
}

/** Runs the seeds in chunks, `workers` child processes at a time. */
async function inWorkers(seeds: number[], common: RunChoices, workers: number): Promise<RunSummary> {
  const chunks: number[][] = [];
  for (let i = 0; i < seeds.length; i += CHUNK) chunks.push(seeds.slice(i, i + CHUNK));
  const results: RunSummary[] = [];
  let done = 0;
  const flags = [
    `--steps=${common.steps}`,
    ...(common.strict ? ['--strict'] : []),
    ...(common.survey ? ['--survey'] : []),
    ...(common.only ? [`--invariants=${common.only.join(',')}`] : []),
    ...(common.skip ? [`--skip=${common.skip.join(',')}`] : []),
    ...(common.mutation ? [`--mutation=${common.mutation}`] : []),
  ];
  const runChunk = (chunk: number[]) =>
    new Promise<RunSummary>((resolve, reject) => {
      const worker = fork(__filename, ['--child', `--from=${chunk[0]}`, `--seeds=${chunk.length}`, ...flags], {
        execArgv: ['-r', 'ts-node/register/transpile-only'],
      });
      let summary: RunSummary | null = null;
      worker.on('message', (message: RunSummary & { tolerated: [InvariantName, ToleratedSummary][] }) => {
        summary = { ...message, tolerated: new Map(message.tolerated) };
      });
      worker.on('exit', (code) => (summary ? resolve(summary) : reject(new Error(`seeds ${chunk[0]}..: worker exited with ${code}`))));
    });
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (let chunk = chunks.shift(); chunk; chunk = chunks.shift()) {
        results.push(await runChunk(chunk));
        done += chunk.length;
        process.stderr.write(`  ${done}/${seeds.length} seeds\n`);
      }
    }),
  );
  return mergeSummaries(results);
}

async function replay(seed: number, common: RunChoices): Promise<number> {
  const { runSeed } = await import('./simulator');
  try {
    const result = await runSeed({ ...simulationOptions(seed, common), verbose: (line) => console.log(line) });
    console.log(`\nseed ${seed}: ${result.steps} steps, ${result.requests} requests, ${result.events} events, all invariants held`);
    for (const tolerated of result.tolerated.values())
      console.log(`  known violation (KNOWN_VIOLATIONS), ${tolerated.count}×, first at step ${tolerated.step}: ${tolerated.message}`);
    return 0;
  } catch (error) {
    console.log(`\n${(error as Error).message}`);
    return 1;
  }
}

async function many(seeds: number[], common: RunChoices, workers: number): Promise<number> {
  const started = performance.now();
  const summary =
    workers > 1
      ? await inWorkers(seeds, common, workers)
      : await runSeeds(seeds, common, (done, total) => {
          if (done % 50 === 0 || done === total) process.stderr.write(`  ${done}/${total} seeds\n`);
        });
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${seeds.length} seeds (${seeds[0]}..${seeds[seeds.length - 1]}), ${summary.steps} steps, ${summary.requests} requests, ` +
      `${(summary.simulatedMs / 3_600_000).toFixed(0)} simulated hours in ${seconds.toFixed(1)} s${workers > 1 ? ` (${workers} processes)` : ''} ` +
      `(${(seeds.length / seconds).toFixed(1)} seeds/s, ${Math.round(summary.steps / seconds)} steps/s); ` +
      `repeated sends excused: ${summary.excusedDuplicates.crash} by a crash of the sender, ${summary.excusedDuplicates.pause} by a pause past its lease, ` +
      `${summary.excusedDuplicates.outage} by the database down at its lease's end`,
  );
  printTolerated(summary.tolerated);
  if (summary.failures.length === 0) {
    if (common.survey) console.log(`Survey: ${summary.tolerated.size} invariant(s) broken by some seed (counted, none thrown).`);
    else
      console.log(
        common.strict ? 'All invariants held.' : `All invariants held but the known violations (${KNOWN_VIOLATIONS.length} entries).`,
      );
    return 0;
  }
  console.log(`\n${summary.failures.length} seed(s) failed:`);
  for (const failure of summary.failures) console.log(`  seed ${failure.seed}: ${failure.message.split('\n')[1] ?? failure.message}`);
  console.log(`\nThe first one:\n${summary.failures[0].message}`);
  return 1;
}

function printTolerated(tolerated: ReadonlyMap<InvariantName, ToleratedSummary>): void {
  if (tolerated.size === 0) return;
  console.log('\nViolations tolerated (KNOWN_VIOLATIONS, or all with --survey):');
  for (const [invariant, entry] of tolerated) {
    const issue = KNOWN_VIOLATIONS.filter((known) => known.invariant === invariant)
      .map((known) => known.issue)
      .join('; ');
    console.log(`  ${invariant}: ${entry.seeds.length} seed(s), e.g. ${entry.seeds.slice(0, 8).join(', ')} — ${issue}`);
    console.log(`    first: seed ${entry.seeds[0]}, step ${entry.first.step}: ${entry.first.message}`);
    console.log(
      `    replay: npm run test:simulation -- --seed=${entry.seeds[0]} --steps=${entry.steps} --strict --invariants=${invariant}`,
    );
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(2);
  },
);
