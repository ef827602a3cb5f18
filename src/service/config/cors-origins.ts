/** `CORS_ORIGINS`: comma-separated exact origins (`https://app.example.com`, `http://localhost:5173`). */
export function parseCorsOrigins(value: string | undefined): string[] {
  const origins = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  const bad = origins.filter((origin) => !isOrigin(origin));
  if (bad.length > 0) {
    throw new Error(
      `Invalid configuration:\n  - CORS_ORIGINS must list origins like https://app.example.com (scheme, host, optional port; no path, no *): ${bad.join(', ')}`,
    );
  }
  return origins;
}

function isOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value;
  } catch {
    return false;
  }
}
