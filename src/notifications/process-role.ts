/** What a process does: `api` stores and serves, `worker` delivers, `all` both (default). */
export type ProcessRole = 'api' | 'worker' | 'all';
export const PROCESS_ROLES: readonly ProcessRole[] = ['api', 'worker', 'all'];

/** The process role the options give (`all` when unset), validated: the engine and the API routes read it from here. */
export function processRole(options: { readonly role?: ProcessRole }): ProcessRole {
  const role = options.role ?? 'all';
  if (!PROCESS_ROLES.includes(role)) throw new RangeError(`role must be one of ${PROCESS_ROLES.join(', ')}, got ${String(role)}`);
  return role;
}
