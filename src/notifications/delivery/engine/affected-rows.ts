/** The rows a MySQL/MariaDB write matched, from mysql2's answer to it (mysql2 counts found rows); 0 for another driver's. */
export function affectedRowsOf(answer: unknown): number {
  return typeof answer === 'object' && answer !== null && 'affectedRows' in answer ? Number(answer.affectedRows) : 0;
}
