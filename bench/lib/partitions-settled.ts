import { sleep, wallMs } from './clock';
import { metricTotal } from './metrics';

/** Partitions of users; every instance's directory of owners is read again at least this often (5 s renewals). */
const PARTITIONS = 256;
const DIRECTORY_READ_MS = 5_000;

/**
 * Waits until the instances have split the partitions (each owns some, all 256 owned, the split unchanged over a
 * renewal; instances hand partitions over for about 10 s after the last one joins), then one more directory read:
 * measured from then, a wake-up reaches the owner, not the instance that owned the partition a few seconds before
 * (whose new owner then waits for its poll).
 */
export async function partitionsSettled(bases: readonly string[]): Promise<void> {
  const deadline = wallMs() + 60_000;
  let split = '';
  let since = wallMs();
  for (;;) {
    const owned = await Promise.all(bases.map((base) => metricTotal(base, 'webhook_partitions_owned')));
    const settled = owned.every((count) => count > 0) && owned.reduce((sum, count) => sum + count, 0) === PARTITIONS;
    if (owned.join() !== split) [split, since] = [owned.join(), wallMs()];
    // Unchanged over more than a renewal: partitions move at renewals.
    else if (settled && wallMs() - since > DIRECTORY_READ_MS) break;
    if (wallMs() > deadline) throw new Error(`the instances did not settle their split of the partitions within 60 s: ${split}`);
    await sleep(250);
  }
  await sleep(DIRECTORY_READ_MS);
}
