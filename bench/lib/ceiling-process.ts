// The physical limit: a bare undici `request` loop with the service's concurrency, body size and
// signing, to the same receiver, in its own process like the service. The body and the signed headers
// come from the service's own builders (in the build), so the ceiling sends exactly what an attempt sends.
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { wallMs } from './clock';
import { serveIpc } from './ipc';
import { DIST } from './library';
import { benchEvent } from './workload';

type RequestFile = typeof import('../../src/notifications/delivery/wire/webhook-request');
type BodyFile = typeof import('../../src/notifications/delivery/wire/webhook-body');
const { buildWebhookRequest } = require(`${DIST}/notifications/delivery/wire/webhook-request.js`) as RequestFile;
const { webhookBody } = require(`${DIST}/notifications/delivery/wire/webhook-body.js`) as BodyFile;

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
      const { url, headers, body } = buildWebhookRequest({
        url: `${input.bases[event.userId % input.bases.length]}/hook/${event.userId}/${event.type}`,
        body: webhookBody({
          ...event,
          type: event.type as never,
          severity: event.severity as never,
          createdAt: new Date(now).toISOString(),
          payload: { ...event.payload, t: wallMs() },
        }),
        type: event.type,
        eventId: randomUUID(),
        attempt: 1,
        secret: secrets.get(`${event.userId}/${event.type}`)!,
        userAgent: 'Service/0.1.0 (+https://funding.example.com)',
        nowMs: now,
      });
      const response = await request(url, { method: 'POST', dispatcher, headers, body });
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
