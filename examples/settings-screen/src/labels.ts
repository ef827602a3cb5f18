const ACRONYMS = new Set(['api']);

/** `UTILIZATION_AND_CASH` → `Utilization and cash`, `API_KEY_INVALID` → `API key invalid`. */
export function humanize(code: string): string {
  const words = code
    .toLowerCase()
    .split('_')
    .map((word) => (ACRONYMS.has(word) ? word.toUpperCase() : word));
  return [words[0].charAt(0).toUpperCase() + words[0].slice(1), ...words.slice(1)].join(' ');
}

/** `12.4` ms → `12 ms`, `1530` → `1.5 s`. */
export function duration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export function time(iso: string): string {
  return new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium' });
}
