import type { FieldError } from './api-errors';

/**
 * How deeply any input field may nest objects and arrays, the field's own object or array counting as
 * level 1 (`{"a":{"b":[1]}}` is 3 levels). Checked before class-transformer copies a body: its copy is
 * recursive and overflows the stack on deep input.
 */
export const MAX_JSON_DEPTH = 32;

export const TOO_DEEP_MESSAGE = `must not nest objects and arrays more than ${MAX_JSON_DEPTH} levels deep`;

/** The levels of objects and arrays in `value` exceed `maxDepth`; iterative, so any depth (or a cycle) is safe. */
export function nestsDeeperThan(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  while (pending.length > 0) {
    const { value: node, depth } = pending.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > maxDepth) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (child !== null && typeof child === 'object') pending.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}

interface Node {
  readonly value: unknown;
  readonly depth: number;
  readonly parent?: Node;
  readonly key?: string | number;
}

// Paths are built only for the node that fails, so a large value costs no string per node.
function pathOf(node: Node, field: string): string {
  const keys: Array<string | number> = [];
  for (let at: Node | undefined = node; at?.parent; at = at.parent) keys.push(at.key!);
  return keys.reverse().reduce<string>((path, key) => (typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`), field);
}

/**
 * The first problem of a value that is sent on exactly as it was given (an event `payload`): nesting
 * deeper than {@link MAX_JSON_DEPTH} (named by `field`), or a value JSON cannot carry: a non-finite number
 * (`1e400` parses as Infinity and would be sent as `null`) or a bigint, named by its path (`payload.amount`).
 */
export function verbatimJsonError(value: unknown, field: string): FieldError | undefined {
  const pending: Node[] = [{ value, depth: 1 }];
  while (pending.length > 0) {
    const node = pending.pop()!;
    const { value: current, depth } = node;
    if (typeof current === 'number' && !Number.isFinite(current)) return { field: pathOf(node, field), message: 'must be a finite number' };
    if (typeof current === 'bigint') return { field: pathOf(node, field), message: 'must be a JSON number, not a bigint' };
    if (current === null || typeof current !== 'object') continue;
    if (depth > MAX_JSON_DEPTH) return { field, message: TOO_DEEP_MESSAGE };
    if (Array.isArray(current)) {
      for (let index = current.length - 1; index >= 0; index--)
        pending.push({ value: current[index], depth: depth + 1, parent: node, key: index });
    } else {
      const keys = Object.keys(current);
      for (let index = keys.length - 1; index >= 0; index--) {
        pending.push({ value: (current as Record<string, unknown>)[keys[index]], depth: depth + 1, parent: node, key: keys[index] });
      }
    }
  }
  return undefined;
}
