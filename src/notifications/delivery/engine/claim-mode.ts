/**
 * How the claim keeps two instances off one delivery on MySQL-compatible servers. `skip-locked` (the default): a plain
 * SELECT picks the rows, `SELECT … FOR UPDATE SKIP LOCKED` by id keeps those no other claim holds, then the conditional
 * UPDATE of the lease takes them.
 * `conditional-update`: a plain SELECT, then the same conditional UPDATE (`locked_until` free or past), which alone
 * decides: two claims that pick the same rows wait on each other's row locks and the second takes none of them. Slower
 * when instances contend, but safe on servers whose SKIP LOCKED does not lock or is refused.
 */
export type ClaimMode = 'skip-locked' | 'conditional-update';
export const CLAIM_MODES: readonly ClaimMode[] = ['skip-locked', 'conditional-update'];

/**
 * MySQL-compatible distributed servers, told by `SELECT VERSION()`: TiDB accepts `SKIP LOCKED` but does not lock
 * (pingcap/tidb#69720), so two instances could claim one row; Vitess refuses the syntax.
 */
const DISTRIBUTED_SERVERS = [
  { name: 'TiDB', pattern: /tidb/i },
  { name: 'Vitess', pattern: /vitess/i },
] as const;

export function distributedServerOf(version: string): string | null {
  return DISTRIBUTED_SERVERS.find((server) => server.pattern.test(version))?.name ?? null;
}

/** The first versions with `SELECT … FOR UPDATE SKIP LOCKED`. */
const SKIP_LOCKED_SINCE = { MariaDB: [10, 6, 0], MySQL: [8, 0, 1] } as const;

/** The MariaDB or MySQL release whose SKIP LOCKED a server lacks (null when it has it, or is neither). */
export function lacksSkipLocked(version: string): string | null {
  const mariadb = /(\d+)\.(\d+)\.(\d+)-MariaDB/i.exec(version); // also after the "5.5.5-" some servers put first
  const mysql = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  const [name, parts] = mariadb ? (['MariaDB', mariadb] as const) : mysql ? (['MySQL', mysql] as const) : [null, null];
  if (name === null) return null;
  const [major, minor, patch] = parts.slice(1, 4).map(Number);
  const [sinceMajor, sinceMinor, sincePatch] = SKIP_LOCKED_SINCE[name];
  const older = major - sinceMajor || minor - sinceMinor || patch - sincePatch;
  return older < 0 ? `${name} ${sinceMajor}.${sinceMinor}.${sincePatch}` : null;
}

/**
 * The claim mode for the server that answered `version`: the configured one, or `conditional-update` on TiDB and Vitess
 * when none is configured. `skip-locked` configured on one of those refuses to start, saying why; so does
 * `skip-locked` (configured or by default) on a MySQL or MariaDB too old for SKIP LOCKED.
 */
export function claimModeFor(version: string, configured: ClaimMode | undefined): ClaimMode {
  const server = distributedServerOf(version);
  if (server === null) {
    const since = lacksSkipLocked(version);
    if (since !== null && configured !== 'conditional-update')
      throw new Error(
        `The database (version ${version}) has no SELECT … FOR UPDATE SKIP LOCKED, which claiming deliveries uses (since ${since}): ` +
          'upgrade it, or set delivery.claimMode (DELIVERY_CLAIM_MODE) to conditional-update.',
      );
    return configured ?? 'skip-locked';
  }
  if (configured === 'skip-locked') {
    throw new Error(
      `The database is ${server} (version ${version}), where SELECT … FOR UPDATE SKIP LOCKED is not safe for claiming deliveries ` +
        `(TiDB does not lock the rows, Vitess refuses it): set delivery.claimMode (DELIVERY_CLAIM_MODE) to conditional-update, or leave it unset.`,
    );
  }
  return 'conditional-update';
}
