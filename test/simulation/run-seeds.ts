import { INVARIANT_NAMES, type InvariantName, isKnownViolation } from './invariants';
import { runSeed, SimulationFailure, type SimOptions, type ToleratedViolation } from './simulator';
import type { MutationName } from './mutations';
import type { DuplicateCause } from './world-model';

export const DEFAULT_STEPS = 300;

export interface RunChoices {
  readonly steps: number;
  /** Tolerate none of KNOWN_VIOLATIONS. */
  readonly strict?: boolean;
  /** Tolerate (count and report) every invariant: which seeds break which. */
  readonly survey?: boolean;
  /** Check only these invariants. */
  readonly only?: readonly InvariantName[];
  /** Check all but these. */
  readonly skip?: readonly InvariantName[];
  /** Run a deliberately broken engine or store (mutations.ts). */
  readonly mutation?: MutationName;
}

export interface ToleratedSummary {
  readonly seeds: number[];
  readonly first: ToleratedViolation;
  readonly steps: number;
}

export interface RunSummary {
  steps: number;
  requests: number;
  simulatedMs: number;
  /** Repeated sends, by the cause that excused each. */
  readonly excusedDuplicates: Record<DuplicateCause, number>;
  readonly failures: { seed: number; message: string }[];
  readonly tolerated: Map<InvariantName, ToleratedSummary>;
}

/** The options of one seed's run, and the command that replays it with the same choices. */
export function simulationOptions(seed: number, choices: RunChoices): SimOptions {
  const invariants = new Set((choices.only ?? INVARIANT_NAMES).filter((name) => !choices.skip?.includes(name)));
  const tolerates = choices.survey ? () => true : choices.strict ? () => false : isKnownViolation;
  const flags = [
    `--steps=${choices.steps}`,
    ...(choices.strict || choices.survey ? ['--strict'] : []),
    ...(choices.only ? [`--invariants=${choices.only.join(',')}`] : []),
    ...(choices.skip ? [`--skip=${choices.skip.join(',')}`] : []),
    ...(choices.mutation ? [`--mutation=${choices.mutation}`] : []),
  ];
  return {
    mutation: choices.mutation,
    seed,
    steps: choices.steps,
    invariants,
    tolerates,
    replay: () => `npm run test:simulation -- --seed=${seed} ${flags.join(' ')}`,
  };
}

/** Runs the seeds one after the other; failures are collected, not thrown. */
export async function runSeeds(
  seeds: readonly number[],
  choices: RunChoices,
  progress?: (done: number, total: number) => void,
): Promise<RunSummary> {
  const summary = emptySummary();
  for (const [index, seed] of seeds.entries()) {
    try {
      const result = await runSeed(simulationOptions(seed, choices));
      summary.steps += result.steps;
      summary.requests += result.requests;
      summary.simulatedMs += result.simulatedMs;
      addDuplicates(summary.excusedDuplicates, result.excusedDuplicates);
      for (const [invariant, violation] of result.tolerated) {
        const entry = summary.tolerated.get(invariant);
        if (entry) entry.seeds.push(seed);
        else summary.tolerated.set(invariant, { seeds: [seed], first: violation, steps: choices.steps });
      }
    } catch (error) {
      if (!(error instanceof SimulationFailure)) throw new Error(`seed ${seed}: ${(error as Error).stack ?? String(error)}`);
      summary.failures.push({ seed, message: error.message });
    }
    progress?.(index + 1, seeds.length);
  }
  return summary;
}

/** One summary of several runs (of worker processes), failures and tolerated violations in seed order. */
export function mergeSummaries(summaries: readonly RunSummary[]): RunSummary {
  const merged = emptySummary();
  for (const summary of summaries) {
    merged.steps += summary.steps;
    merged.requests += summary.requests;
    merged.simulatedMs += summary.simulatedMs;
    addDuplicates(merged.excusedDuplicates, summary.excusedDuplicates);
    merged.failures.push(...summary.failures);
    for (const [invariant, entry] of summary.tolerated) {
      const known = merged.tolerated.get(invariant);
      if (!known) merged.tolerated.set(invariant, { ...entry, seeds: [...entry.seeds] });
      else if (entry.seeds[0] < known.seeds[0]) merged.tolerated.set(invariant, { ...entry, seeds: [...entry.seeds, ...known.seeds] });
      else known.seeds.push(...entry.seeds);
    }
  }
  merged.failures.sort((a, b) => a.seed - b.seed);
  for (const entry of merged.tolerated.values()) entry.seeds.sort((a, b) => a - b);
  return merged;
}

function emptySummary(): RunSummary {
  return {
    steps: 0,
    requests: 0,
    simulatedMs: 0,
    excusedDuplicates: { crash: 0, pause: 0, outage: 0 },
    failures: [],
    tolerated: new Map(),
  };
}

function addDuplicates(sum: Record<DuplicateCause, number>, more: Readonly<Record<DuplicateCause, number>>): void {
  for (const cause of Object.keys(sum) as DuplicateCause[]) sum[cause] += more[cause];
}
