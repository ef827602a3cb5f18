/** User ids are stored in INTEGER columns: 1 … 2^31 − 1. */
export const MAX_USER_ID = 2_147_483_647;

/** A positive integer user id, given as a number or as a string of digits; anything else is `undefined`. */
export function parseUserId(value: unknown): number | undefined {
  const id = typeof value === 'string' && /^[1-9][0-9]{0,9}$/.test(value) ? Number(value) : value;
  return typeof id === 'number' && Number.isInteger(id) && id > 0 && id <= MAX_USER_ID ? id : undefined;
}
