import { lookup } from 'node:dns/promises';

/** Resolves a host name to all of its A/AAAA answers. */
export type HostResolver = (hostname: string) => Promise<string[]>;

export const systemResolver: HostResolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map(({ address }) => address);

const UNRESOLVABLE_CODES: ReadonlySet<string> = new Set([
  'ENOTFOUND',
  'ENODATA',
  'ENONAME',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'EAI_NONAME',
  'ESERVFAIL',
  'EREFUSED',
  'ETIMEOUT',
  'ECONNREFUSED',
]);

/** True for resolver failures meaning "this name has no usable answer right now", as opposed to bugs. */
export function isUnresolvableError(error: unknown): boolean {
  if (!(error instanceof Error) || !('code' in error)) return false;
  return typeof error.code === 'string' && UNRESOLVABLE_CODES.has(error.code);
}
