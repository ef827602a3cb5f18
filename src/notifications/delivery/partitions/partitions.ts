/**
 * Users hash into a fixed number of partitions; one delivering instance at a time owns each (it holds the partition's
 * lease in `webhook_partitions`), so every per-endpoint decision (the cap, the circuit, its probe, the user's share) is
 * made by one process, in its memory. A delivery's partition is stored with it and never changes.
 */
export const PARTITION_COUNT = 256;

/** The partition of a user's deliveries: fixed forever (stored in `webhook_deliveries.user_partition`). */
export function partitionOf(userId: number): number {
  return ((userId % PARTITION_COUNT) + PARTITION_COUNT) % PARTITION_COUNT;
}

/**
 * Which deliveries an instance may claim: every partition's (`'all'`: the one delivering process, on SQLite), or those of
 * `partitions` (what its memory holds long enough to start an attempt) whose lease `holder` holds past `leasedPast`, as
 * the partitions table says too (checked in SQL). Both views must agree: a claim never takes what the engine could not
 * start (it would hand it back, and claim it again), nor what the table has given another instance.
 */
export type Ownership = 'all' | { readonly holder: string; readonly leasedPast: number; readonly partitions: readonly number[] };

/**
 * The holder that should own `partition` among `holders` (rendezvous hashing: the highest score of holder and
 * partition): when a holder joins or leaves, only the partitions it wins or held move.
 */
export function preferredHolder(holders: readonly string[], partition: number): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const holder of holders) {
    const score = fnv1a(`${holder}:${partition}`);
    if (score > bestScore || (score === bestScore && best !== undefined && holder < best)) {
      best = holder;
      bestScore = score;
    }
  }
  return best;
}

/** 32-bit FNV-1a, mixed (murmur3's finalizer) so that close keys spread: a cheap, stable hash for rendezvous scores. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
