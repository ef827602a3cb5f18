import { request } from 'undici';

/** A metric of an instance's `GET /metrics`, every series of it summed (0 when it has none). */
export async function metricTotal(base: string, name: string): Promise<number> {
  const response = await request(`${base}/metrics`);
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`GET ${base}/metrics: ${response.statusCode} ${text.slice(0, 200)}`);
  let total = 0;
  for (const line of text.split('\n'))
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) total += Number(line.split(' ').pop());
  return total;
}
