/** Checks a tuning option at start, so a bad value fails loudly instead of stalling the workers. */
export function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a whole number ≥ 1, got ${value}`);
  return value;
}
