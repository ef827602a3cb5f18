// The work every peer does per job, as our engine does per attempt: the stored JSON body, signed (HMAC-SHA256, with the
// engine's own request builder from the build) and POSTed with undici to the user's endpoint on the bench's receiver.
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';
import { DIST } from '../library';
import { benchEvent } from '../workload';
import type { PeerInput, PeerJob } from './peer-types';

type RequestFile = typeof import('../../../src/notifications/delivery/wire/webhook-request');
type BodyFile = typeof import('../../../src/notifications/delivery/wire/webhook-body');
const { buildWebhookRequest } = require(`${DIST}/notifications/delivery/wire/webhook-request.js`) as RequestFile;
const { webhookBody } = require(`${DIST}/notifications/delivery/wire/webhook-body.js`) as BodyFile;

/** The engine's deadline for an attempt (`DELIVERY_TIMEOUT_MS` default). */
const TIMEOUT_MS = 5_000;
/** What the engine keeps of a response body (`response_excerpt`). */
const EXCERPT_CHARS = 512;

/** The jobs of events `from`…`from + count`, as the bench's other scenarios make them (`benchEvent`), each with a new id. */
export function peerJobs(from: number, count: number, users: number): PeerJob[] {
  const createdAt = new Date().toISOString();
  return Array.from({ length: count }, (_, i) => {
    const event = benchEvent(from + i, users);
    const body = webhookBody({ ...event, type: event.type as never, severity: event.severity as never, createdAt });
    return { eventId: randomUUID(), userId: event.userId, type: event.type, body };
  });
}

export interface PostResult {
  readonly statusCode: number;
  readonly durationMs: number;
  readonly excerpt: string;
}

/** Signs and sends jobs over one undici Agent (keep-alive, trusting the receiver's CA). */
export class WebhookPoster {
  private readonly secrets: Map<string, string>;
  private readonly dispatcher: Agent;

  constructor(private readonly input: Pick<PeerInput, 'bases' | 'caPem' | 'secrets'>) {
    this.secrets = new Map(input.secrets);
    this.dispatcher = new Agent({ connect: { ca: input.caPem } });
  }

  async post(job: PeerJob, attempt: number): Promise<PostResult> {
    const startedAt = Date.now();
    const { url, headers, body } = buildWebhookRequest({
      url: `${this.input.bases[job.userId % this.input.bases.length]}/hook/${job.userId}/${job.type}`,
      body: job.body,
      type: job.type,
      eventId: job.eventId,
      attempt,
      secret: this.secrets.get(`${job.userId}/${job.type}`)!,
      userAgent: 'Service/0.1.0 (+https://funding.example.com)',
      nowMs: startedAt,
    });
    const response = await request(url, {
      method: 'POST',
      dispatcher: this.dispatcher,
      headers,
      body,
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
    const text = await response.body.text();
    return { statusCode: response.statusCode, durationMs: Date.now() - startedAt, excerpt: text.slice(0, EXCERPT_CHARS) };
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}

export const succeeded = (result: PostResult) => result.statusCode >= 200 && result.statusCode < 300;
