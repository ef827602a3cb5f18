/** Keeps IN lists well below every driver's limit on bound parameters (SQLite: 32766). */
export const IN_LIST_CHUNK = 1000;

/** Runs `find` once per chunk of `keys` and concatenates the rows. */
export async function findInChunks<K, R>(keys: readonly K[], find: (chunk: K[]) => Promise<R[]>): Promise<R[]> {
  const rows: R[] = [];
  for (let i = 0; i < keys.length; i += IN_LIST_CHUNK) rows.push(...(await find(keys.slice(i, i + IN_LIST_CHUNK))));
  return rows;
}
