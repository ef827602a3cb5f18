import type { IncomingHttpHeaders } from 'node:http';
import { verifyWebhookPublicKeySignature } from '../notifications/delivery/wire/standard-webhooks-signature';
import { verifyWebhookSignature } from '../notifications/delivery/wire/webhook-signature';

/** Narrows the deliveries a test waits for; every given field must match. */
export interface DeliveryFilter {
  /** `X-Service-Event-Id`: one event, across its retries and redeliveries. */
  readonly eventId?: string;
  /** `X-Service-Type`, e.g. `'LOAN_EXECUTED'`. */
  readonly type?: string;
  /** `userId` of the JSON body. */
  readonly userId?: number;
  /** Request path on the receiver, e.g. `'/hook'`. */
  readonly path?: string;
}

/** One request as the test receiver got it: the exact bytes and headers. */
export class ReceivedRequest {
  constructor(
    readonly method: string,
    readonly path: string,
    readonly headers: IncomingHttpHeaders,
    readonly rawBody: Buffer,
    readonly receivedAt: number,
  ) {}

  /** `X-Service-Event-Id`. */
  get eventId(): string | undefined {
    return this.header('x-service-event-id');
  }

  /** `X-Service-Type`. */
  get type(): string | undefined {
    return this.header('x-service-type');
  }

  /** `X-Service-Attempt`, 1…6. */
  get attempt(): number | undefined {
    const value = this.header('x-service-attempt');
    return value === undefined ? undefined : Number(value);
  }

  /** The body parsed as JSON (`{type, severity, title, body, createdAt, payload, userId}` for a delivery). */
  json<T = Record<string, unknown>>(): T {
    return JSON.parse(this.rawBody.toString('utf8')) as T;
  }

  /**
   * True when `X-Service-Signature` is the HMAC of `<X-Service-Timestamp>.<raw body>` under `secret`. The timestamp
   * is not compared with the wall clock (the module may run on a test clock); pass `toleranceSeconds` and `now` to do so.
   */
  isSignedWith(secret: string, replay?: { toleranceSeconds: number; now: number }): boolean {
    const timestamp = this.header('x-service-timestamp');
    return verifyWebhookSignature({
      secret,
      timestamp,
      signature: this.header('x-service-signature'),
      rawBody: this.rawBody,
      toleranceSeconds: replay?.toleranceSeconds ?? 0,
      now: replay?.now ?? Number(timestamp) * 1000,
    });
  }

  /**
   * True when a `v1a` signature of `webhook-signature` verifies with `publicKey` (`whpk_…`, the settings API's
   * `signingPublicKey`) over `<webhook-id>.<webhook-timestamp>.<raw body>`: what a receiver holding no secret checks.
   * The timestamp is compared with `now` only when `replay` is given.
   */
  isSignedWithPublicKey(publicKey: string, replay?: { toleranceSeconds: number; now: number }): boolean {
    const timestamp = this.header('webhook-timestamp');
    return verifyWebhookPublicKeySignature({
      publicKey,
      id: this.header('webhook-id'),
      timestamp,
      signature: this.header('webhook-signature'),
      rawBody: this.rawBody,
      toleranceSeconds: replay?.toleranceSeconds ?? 0,
      now: replay?.now ?? Number(timestamp) * 1000,
    });
  }

  matches(filter: DeliveryFilter): boolean {
    if (filter.eventId !== undefined && this.eventId !== filter.eventId) return false;
    if (filter.type !== undefined && this.type !== filter.type) return false;
    if (filter.path !== undefined && this.path !== filter.path) return false;
    if (filter.userId !== undefined && this.bodyUserId() !== filter.userId) return false;
    return true;
  }

  /** One line for failure messages, e.g. `POST /hook LOAN_EXECUTED user 42 event 3f2a… attempt 1`. */
  describe(): string {
    const parts = [`${this.method} ${this.path}`, this.type ?? '(no X-Service-Type)'];
    const userId = this.bodyUserId();
    if (userId !== undefined) parts.push(`user ${userId}`);
    if (this.eventId) parts.push(`event ${this.eventId}`);
    if (this.attempt !== undefined) parts.push(`attempt ${this.attempt}`);
    return parts.join(' ');
  }

  private bodyUserId(): number | undefined {
    try {
      const userId = this.json().userId;
      return typeof userId === 'number' ? userId : undefined;
    } catch {
      return undefined;
    }
  }

  private header(name: string): string | undefined {
    const value = this.headers[name];
    return Array.isArray(value) ? value[0] : value;
  }
}

export function describeFilter(filter: DeliveryFilter): string {
  const parts = Object.entries(filter)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${String(value)}`);
  return parts.length === 0 ? 'any delivery' : parts.join(', ');
}

export function describeRequests(requests: readonly ReceivedRequest[]): string {
  if (requests.length === 0) return 'nothing arrived';
  return `${requests.length} arrived:\n${requests.map((request) => `  - ${request.describe()}`).join('\n')}`;
}
