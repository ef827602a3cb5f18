import { randomUUID } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { affectedRowsOf } from './affected-rows';
import { WebhookEndpointSlot } from '../webhook-endpoint-slot.entity';
import type { EndpointSlot, PurgedSlots, SlotTaken } from './outbox-store';

/**
 * The SQL of the per-endpoint cap across instances ({@link WebhookEndpointSlot}) and of the circuit all instances share
 * (`webhook_endpoint_probes`), for {@link DeliveryOutboxRepository}. Each is one autocommitted statement (on SQLite, a
 * turn among its serialized transactions) but for the first take of an endpoint, which makes its slot rows.
 */

/**
 * The circuit is open (no probe answered since an instance opened it): for a prober, only while its cool-down runs. Its
 * placeholders are named for the query builder unless given (`?` in written-out SQL, whose parameters follow in order).
 */
function circuitOpen(probing: boolean, endpoint = ':endpoint', now = ':now'): string {
  return `EXISTS (SELECT 1 FROM webhook_endpoint_probes p WHERE p.endpoint = ${endpoint}${probing ? ` AND p.next_probe_at > ${now}` : ''})`;
}

/**
 * Takes a slot. The first take of an endpoint on MySQL/MariaDB (`rowsMade` false: this instance has not seen its rows)
 * makes its rows with slot 0 held, one INSERT IGNORE that makes none while the circuit is open (retention deletes the
 * rows of endpoints none of whose slots is held, open circuits' too); if they existed, or on SQLite, it takes the lowest free slot with
 * one conditional UPDATE: `UPDATE … ORDER BY slot LIMIT 1` on MySQL/MariaDB (the row
 * lock makes two takers of one slot wait for each other, then the second finds it held), the same through the row id
 * on SQLite (no LIMIT on UPDATE there). When none was taken, one read tells why: the circuit is open, or all are held,
 * or the rows are not made yet (the endpoint's first take, or a larger cap than before) or one was freed meanwhile:
 * then (made, and) taken once more.
 */
export async function takeEndpointSlot(
  write: <T>(statement: (manager: EntityManager) => Promise<T>) => Promise<T>,
  mysql: boolean,
  request: { endpoint: string; cap: number; now: number; until: number; probing: boolean; rowsMade: boolean },
): Promise<SlotTaken> {
  const { endpoint, cap, now, until, probing, rowsMade } = request;
  const slot: EndpointSlot = { endpoint, holder: randomUUID(), heldUntil: until };
  if (!rowsMade && mysql && (await write((manager) => makeSlotsTaking(manager, endpoint, cap, { slot, probing, now }))) === cap)
    return slot;
  const take = () =>
    write(async (manager) => {
      if (mysql) {
        // Written out, not built: every attempt that does not inherit a slot runs it, and the query builder's CPU shows.
        const answer: unknown = await manager.query(
          'UPDATE webhook_endpoint_slots SET holder = ?, held_until = ? WHERE endpoint = ? AND slot < ? AND held_until <= ? ' +
            `AND NOT ${circuitOpen(probing, '?', '?')} ORDER BY slot LIMIT 1`,
          [slot.holder, until, endpoint, cap, now, endpoint, ...(probing ? [now] : [])],
        );
        return affectedRowsOf(answer) > 0;
      }
      const taken = await manager
        .createQueryBuilder()
        .update(WebhookEndpointSlot)
        .set({ holder: slot.holder, heldUntil: until })
        .where(
          'rowid = (SELECT rowid FROM webhook_endpoint_slots WHERE endpoint = :endpoint AND slot < :cap AND held_until <= :now ' +
            `ORDER BY slot LIMIT 1) AND NOT ${circuitOpen(probing)}`,
          { endpoint, cap, now },
        )
        .execute();
      return Boolean(taken.affected);
    });
  if (await take()) return slot;
  const [state] = await write((manager) =>
    manager.query<{ slots: number | string; free: number | string | null; open_until: number | string | null }[]>(
      'SELECT COUNT(*) AS slots, SUM(CASE WHEN held_until <= ? THEN 1 ELSE 0 END) AS free, ' +
        '(SELECT next_probe_at FROM webhook_endpoint_probes WHERE endpoint = ?) AS open_until ' +
        'FROM webhook_endpoint_slots WHERE endpoint = ? AND slot < ?',
      [now, endpoint, endpoint, cap],
    ),
  );
  const openUntil = state.open_until === null ? null : Number(state.open_until);
  if (openUntil !== null && (!probing || openUntil > now)) return { openUntil };
  // Free since the take (another taker made the rows, or released one meanwhile), or not made yet: one more take.
  if (Number(state.slots) < cap) await write((manager) => makeSlots(manager, mysql, endpoint, cap));
  else if (Number(state.free ?? 0) === 0) return { busy: true };
  return (await take()) ? slot : { busy: true };
}

/** A take of {@link takeFirstSlots}: slot 0 of `endpoint` until `until`, its rows made with it unless `rowsMade`. */
export interface FirstSlotTake {
  readonly endpoint: string;
  readonly cap: number;
  readonly until: number;
  readonly rowsMade: boolean;
}

/**
 * Takes slot 0 of each of these endpoints (distinct, none probing) at once, on MySQL/MariaDB: one upsert takes each
 * row where free (made, with the endpoint's other rows, where this instance has not seen them), one read tells which it
 * got and which circuits are open. What it got of an open circuit goes back at once. Each answer is the slot, the open
 * circuit, or null: slot 0 was held, and that take goes on one by one ({@link takeEndpointSlot}: another slot, or busy).
 * Rows are written in key order, so two such upserts wait for each other rather than deadlock. Should the read fail
 * after the upsert, what it took frees itself when the takers' leases end (as a take whose answer was lost).
 */
export async function takeFirstSlots(
  manager: EntityManager,
  takes: readonly FirstSlotTake[],
  now: number,
): Promise<Map<string, EndpointSlot | { openUntil: number } | null>> {
  const ordered = [...takes].sort((a, b) => (a.endpoint < b.endpoint ? -1 : a.endpoint > b.endpoint ? 1 : 0));
  const slots = new Map(ordered.map(({ endpoint, until }) => [endpoint, { endpoint, holder: randomUUID(), heldUntil: until }]));
  const rows = ordered.map(({ endpoint, cap, rowsMade }) => slotRows(endpoint, rowsMade ? 1 : cap, slots.get(endpoint)));
  // `holder` is assigned first, so `held_until` is set only where the row is now this take's.
  await manager.query(
    `INSERT INTO webhook_endpoint_slots (endpoint, slot, holder, held_until) VALUES ${rows.map((row) => tuples(row.rows)).join(', ')} ` +
      'ON DUPLICATE KEY UPDATE holder = IF(VALUES(holder) IS NOT NULL AND held_until <= ?, VALUES(holder), holder), ' +
      'held_until = IF(VALUES(holder) IS NOT NULL AND holder = VALUES(holder), VALUES(held_until), held_until)',
    [...rows.flatMap((row) => row.params), now],
  );
  const endpoints = [...slots.keys()];
  const read = await manager.query<{ endpoint: string; holder: string | null; open_until: number | string | null }[]>(
    'SELECT s.endpoint, s.holder, p.next_probe_at AS open_until FROM webhook_endpoint_slots s ' +
      `LEFT JOIN webhook_endpoint_probes p ON p.endpoint = s.endpoint WHERE s.slot = 0 AND s.endpoint IN (${endpoints.map(() => '?').join(', ')})`,
    endpoints,
  );
  const answers = new Map<string, EndpointSlot | { openUntil: number } | null>(endpoints.map((endpoint) => [endpoint, null]));
  const refused: EndpointSlot[] = [];
  for (const row of read) {
    const slot = slots.get(row.endpoint);
    if (slot?.holder !== row.holder) continue;
    if (row.open_until === null) answers.set(row.endpoint, slot);
    else {
      refused.push(slot);
      answers.set(row.endpoint, { openUntil: Number(row.open_until) });
    }
  }
  await releaseEndpointSlots(manager, refused);
  return answers;
}

/** The endpoint's slot rows 0 to `cap` − 1, free; those that exist are left as they are. */
async function makeSlots(manager: EntityManager, mysql: boolean, endpoint: string, cap: number): Promise<void> {
  const { rows, params } = slotRows(endpoint, cap);
  const insert = mysql ? 'INSERT IGNORE INTO' : 'INSERT OR IGNORE INTO';
  await manager.query(`${insert} webhook_endpoint_slots (endpoint, slot, holder, held_until) VALUES ${tuples(rows)}`, params);
}

/**
 * On MySQL/MariaDB, the endpoint's slot rows 0 to `cap` − 1 with slot 0 held by `taken.slot`, all or none: none while the
 * circuit is open to this taker, nor where any exists. How many rows it made (all of them: slot 0 is `taken`'s).
 */
async function makeSlotsTaking(
  manager: EntityManager,
  endpoint: string,
  cap: number,
  taken: { slot: EndpointSlot; probing: boolean; now: number },
): Promise<number> {
  const { rows, params } = slotRows(endpoint, cap, taken.slot);
  // The first row (slot 0, held) names the columns of the rows made.
  const made = ['SELECT ? AS endpoint, ? AS slot, ? AS holder, ? AS held_until', ...rows.slice(1).map((row) => `SELECT ${row}`)];
  const answer: unknown = await manager.query(
    'INSERT IGNORE INTO webhook_endpoint_slots (endpoint, slot, holder, held_until) SELECT endpoint, slot, holder, held_until ' +
      `FROM (${made.join(' UNION ALL ')}) made WHERE NOT ${circuitOpen(taken.probing, '?', '?')}`,
    [...params, endpoint, ...(taken.probing ? [taken.now] : [])],
  );
  return affectedRowsOf(answer);
}

/** The placeholders of the endpoint's slot rows 0 to `count` − 1 (endpoint, slot, holder, held_until): free, but slot 0 `taken`'s when given. */
function slotRows(endpoint: string, count: number, taken?: EndpointSlot): { rows: string[]; params: unknown[] } {
  const slots = Array.from({ length: count }, (_, slot) => slot);
  return {
    rows: slots.map((slot) => (slot === 0 && taken ? '?, ?, ?, ?' : '?, ?, NULL, 0')),
    params: slots.flatMap((slot) => (slot === 0 && taken ? [endpoint, slot, taken.holder, taken.heldUntil] : [endpoint, slot])),
  };
}

/** Rows' placeholders as the VALUES of an INSERT. */
function tuples(rows: readonly string[]): string {
  return rows.map((row) => `(${row})`).join(', ');
}

/** Frees the slots still held by these takes, in one statement (each row found by its primary key's prefix). */
export async function releaseEndpointSlots(manager: EntityManager, slots: readonly EndpointSlot[]): Promise<void> {
  if (slots.length === 0) return;
  const which = slots.map(() => '(endpoint = ? AND holder = ?)').join(' OR ');
  await manager.query(
    `UPDATE webhook_endpoint_slots SET holder = NULL, held_until = 0 WHERE ${which}`,
    slots.flatMap((slot) => [slot.endpoint, slot.holder]),
  );
}

/** One more unreachable attempt in a row to the endpoint, all instances together; the count after it (others' included). */
export async function countEndpointFailure(manager: EntityManager, mysql: boolean, endpoint: string): Promise<number> {
  await manager.query(
    mysql
      ? 'INSERT INTO webhook_endpoint_failures (endpoint, failures) VALUES (?, 1) ON DUPLICATE KEY UPDATE failures = failures + 1'
      : 'INSERT INTO webhook_endpoint_failures (endpoint, failures) VALUES (?, 1) ON CONFLICT (endpoint) DO UPDATE SET failures = failures + 1',
    [endpoint],
  );
  const [row] = await manager.query<{ failures: number | string }[]>('SELECT failures FROM webhook_endpoint_failures WHERE endpoint = ?', [
    endpoint,
  ]);
  return Number(row?.failures ?? 1);
}

/** The circuit is open until `until` at least (a later time another instance wrote is kept: it may be a running probe's). */
export async function openEndpointCircuit(manager: EntityManager, mysql: boolean, endpoint: string, until: number): Promise<void> {
  await manager.query(
    mysql
      ? 'INSERT INTO webhook_endpoint_probes (endpoint, next_probe_at) VALUES (?, ?) ON DUPLICATE KEY UPDATE next_probe_at = GREATEST(next_probe_at, VALUES(next_probe_at))'
      : 'INSERT INTO webhook_endpoint_probes (endpoint, next_probe_at) VALUES (?, ?) ON CONFLICT (endpoint) DO UPDATE SET next_probe_at = MAX(next_probe_at, excluded.next_probe_at)',
    [endpoint, until],
  );
}

/**
 * Deletes the slot rows of up to `limit` endpoints after `after` none of whose slots was held at `before`, in one short
 * transaction: a read picks them, a locking read of all their rows (MySQL/MariaDB; SQLite runs one transaction at a
 * time) keeps out those taken since (or purged since by another instance), and one DELETE removes the rest. An
 * endpoint's rows go all together or not at all: a first take that finds some of them would hold slot 0 it made and
 * another besides.
 */
export async function purgeFreeEndpointSlots(
  manager: EntityManager,
  mysql: boolean,
  request: { before: number; after: string; limit: number },
): Promise<PurgedSlots> {
  const { before, after, limit } = request;
  const free = await manager.query<{ endpoint: string }[]>(
    'SELECT endpoint FROM webhook_endpoint_slots WHERE endpoint > ? GROUP BY endpoint HAVING MAX(held_until) <= ? ORDER BY endpoint LIMIT ?',
    [after, before, limit],
  );
  if (free.length === 0) return { matched: 0, endpoints: 0, last: null };
  const candidates = free.map((row) => row.endpoint);
  const placeholders = candidates.map(() => '?').join(', ');
  // Locked, as they are now: taken since the read, or already deleted by another instance's purge.
  const locked = mysql
    ? await manager.query<{ endpoint: string; held_until: number | string }[]>(
        `SELECT endpoint, held_until FROM webhook_endpoint_slots WHERE endpoint IN (${placeholders}) FOR UPDATE`,
        candidates,
      )
    : null;
  const takenSince = new Set(locked?.filter((row) => Number(row.held_until) > before).map((row) => row.endpoint));
  const purged = (locked ? [...new Set(locked.map((row) => row.endpoint))] : candidates).filter((endpoint) => !takenSince.has(endpoint));
  if (purged.length > 0)
    await manager.query(`DELETE FROM webhook_endpoint_slots WHERE endpoint IN (${purged.map(() => '?').join(', ')})`, purged);
  return { matched: candidates.length, endpoints: purged.length, last: candidates[candidates.length - 1] };
}
