import { sleep, wallMs } from './clock';

/**
 * Calls `call(0)`, `call(1)`… `count` times on a fixed schedule of `rate` per second, not waiting for earlier calls;
 * resolves with their answers in order. A call that fails while later ones are still being scheduled is caught at once
 * (never left unhandled) and reported when all have settled.
 */
export async function atSteadyRate<T>(rate: number, count: number, call: (index: number) => Promise<T>): Promise<T[]> {
  const intervalMs = 1000 / rate;
  const calls: Promise<T | undefined>[] = [];
  const failures: Error[] = [];
  const startedAt = wallMs();
  for (let i = 0; i < count; i++) {
    const wait = startedAt + i * intervalMs - wallMs();
    if (wait > 1) await sleep(wait);
    calls.push(
      call(i).catch((error: Error) => {
        failures.push(error);
        return undefined;
      }),
    );
  }
  const answers = await Promise.all(calls);
  if (failures.length > 0) throw new Error(`${failures.length} of ${count} calls failed, the first: ${failures[0].message}`);
  return answers as T[];
}
