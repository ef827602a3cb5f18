// The physical limit: a bare undici `request` loop with the service's concurrency, body size and
// signing, to the same receiver, in its own process like the service.
import { createHmac, randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { wallMs } from './clock';
import { serveIpc } from './ipc';
import { benchEvent } from './workload';

export interface CeilingInput {
  readonly bases: string[];
  readonly caPem: string;
  readonly secrets: [string, string][];
  readonly users: number;
  readonly requests: number;
  readonly concurrency: number;
}

async function run(input: CeilingInput) {
  const secrets = new Map(input.secrets);
  const dispatcher = new Agent({ connect: { ca: input.caPem } });
  let next = 0;
  let ok = 0;
  const startedAt = wallMs();
  const worker = async () => {
    while (next < input.requests) {
      const seq = next++;
      const event = benchEvent(seq, input.users);
      const now = Date.now();
      const body = JSON.stringify({
        type: event.type,
        severity: event.severity,
        title: event.title,
        body: event.body,
        createdAt: new Date(now).toISOString(),
        payload: { ...event.payload, t: wallMs() },
        userId: event.userId,
      });
      const timestamp = Math.floor(now / 1000);
      const secret = secrets.get(`${event.userId}/${event.type}`)!;
      const signature = `v1=${createHmac('sha256', secret).update(`${timestamp}.`).update(body).digest('hex')}`;
      const response = await request(`${input.bases[event.userId % input.bases.length]}/hook/${event.userId}/${event.type}`, {
        method: 'POST',
        dispatcher,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Service/0.1.0 (+https://funding.example.com)',
          'x-service-type': event.type,
          'x-service-event-id': randomUUID(),
          'x-service-attempt': '1',
          'x-service-timestamp': String(timestamp),
          'x-service-signature': signature,
        },
        body,
      });
      await response.body.dump();
      if (response.statusCode >= 200 && response.statusCode < 300) ok++;
    }
  };
  await Promise.all(Array.from({ length: input.concurrency }, worker));
  const durationMs = wallMs() - startedAt;
  await dispatcher.close();
  return { requests: input.requests, ok, durationMs, perSecond: (ok * 1000) / durationMs };
}

serveIpc({ run });
