import type { ValueTransformer } from 'typeorm';

/** BIGINT epoch-millisecond columns come back as strings from mysql2; the entities want numbers. */
export const epochMs: ValueTransformer = {
  to: (value: number | null | undefined) => value,
  from: (value: string | number | null) => (value === null ? null : Number(value)),
};
