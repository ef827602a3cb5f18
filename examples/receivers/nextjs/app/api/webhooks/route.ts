// A Next.js App Router route handler (app/api/webhooks/route.ts). Web APIs only (Request, Response, Web Crypto) and
// the `standardwebhooks` package (plain JavaScript), so it runs on the Node.js and the Edge runtimes alike.
// request.arrayBuffer() gives the raw bytes: never verify over `await request.json()` re-serialized.
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

const TOLERANCE_SECONDS = Number(process.env.WEBHOOK_TOLERANCE_SECONDS ?? 300);
// In memory for the example (and per server instance); in production, a unique key on the event id in your database.
const processedEventIds = new Set<string>();

function hexToBytes(hex: string): Uint8Array {
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/** `v1=` + hex HMAC-SHA256 of `<timestamp>.<raw body>`, keyed with the whole `whsec_…` string, and the timestamp within the tolerance. */
export async function verifySignature(
  secret: string,
  timestamp: string | null,
  signature: string | null,
  rawBody: Uint8Array,
  nowSeconds: number,
  toleranceSeconds: number,
): Promise<boolean> {
  if (!timestamp || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  const received = /^v1=([0-9a-fA-F]{64})$/.exec(signature ?? '');
  if (!received) return false;
  const encoder = new TextEncoder();
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
  const prefix = encoder.encode(`${timestamp}.`);
  const signed = new Uint8Array(prefix.length + rawBody.length);
  signed.set(prefix);
  signed.set(rawBody, prefix.length);
  // subtle.verify compares the MACs in constant time.
  return crypto.subtle.verify('HMAC', key, hexToBytes(received[1]), signed);
}

/**
 * Standard Webhooks with the official package: `webhook-signature` (`v1,<base64>`, any of several) over
 * `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed with the bytes the base64 after `whsec_` encodes, and the
 * timestamp within 5 minutes of `Date.now()` (fixed in the package). Its signature covers the event id.
 */
export function verifyStandardWebhook(secret: string, headers: Headers, rawBody: Uint8Array): boolean {
  try {
    const webhookHeaders = {
      'webhook-id': headers.get('webhook-id') ?? '',
      'webhook-timestamp': headers.get('webhook-timestamp') ?? '',
      'webhook-signature': headers.get('webhook-signature') ?? '',
    };
    // The package signs a string: the body's UTF-8 text (what the service sends). jsonParse: false, we parse below.
    new Webhook(secret).verify(new TextDecoder().decode(rawBody), webhookHeaders, { jsonParse: false });
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}

function base64ToBytes(base64: string): Uint8Array {
  return Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
}

/**
 * Standard Webhooks' asymmetric scheme with Web Crypto and the public key alone (`WEBHOOK_PUBLIC_KEY`, the `whpk_…`
 * the settings API shows): one `v1a,<base64>` of `webhook-signature` (space-separated; `v1,` HMAC entries are skipped)
 * is an Ed25519 signature of `<webhook-id>.<webhook-timestamp>.<raw body>`, and the timestamp is within the tolerance.
 */
export async function verifyEd25519(
  publicKey: string,
  headers: Headers,
  rawBody: Uint8Array,
  nowSeconds: number,
  toleranceSeconds: number,
): Promise<boolean> {
  const id = headers.get('webhook-id');
  const timestamp = headers.get('webhook-timestamp');
  const signatures = headers.get('webhook-signature');
  if (!id || !timestamp || !/^\d{1,12}$/.test(timestamp) || !signatures) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  const key = await crypto.subtle.importKey('raw', base64ToBytes(publicKey.replace(/^whpk_/, '')), { name: 'Ed25519' }, false, ['verify']);
  const prefix = new TextEncoder().encode(`${id}.${timestamp}.`);
  const signed = new Uint8Array(prefix.length + rawBody.length);
  signed.set(prefix);
  signed.set(rawBody, prefix.length);
  for (const entry of signatures.split(' ')) {
    const [version, encoded] = entry.split(',', 2);
    if (version !== 'v1a' || !encoded) continue;
    let signature: Uint8Array;
    try {
      signature = base64ToBytes(encoded);
    } catch {
      continue; // not base64
    }
    if (signature.length === 64 && (await crypto.subtle.verify('Ed25519', key, signature, signed))) return true;
  }
  return false;
}

/** The body as a JSON object, or undefined for anything else (empty, invalid JSON, an array, a string, null, …). */
function parseJsonObject(rawBody: Uint8Array): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(new TextDecoder().decode(rawBody));
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const answer = (status: number, text: string, log: object) => {
  console.log(JSON.stringify(log));
  return new Response(text, { status });
};

export async function POST(request: Request): Promise<Response> {
  const rawBody = new Uint8Array(await request.arrayBuffer());
  const secret = process.env.WEBHOOK_SECRET ?? '';
  // WEBHOOK_SCHEME=standard-webhooks checks webhook-signature's v1 (HMAC), ed25519 its v1a with WEBHOOK_PUBLIC_KEY
  // alone; the default (x-service) checks X-Service-Signature.
  const scheme = process.env.WEBHOOK_SCHEME ?? 'x-service';
  const eventId = request.headers.get(scheme === 'x-service' ? 'x-service-event-id' : 'webhook-id') ?? '';
  const nowSeconds = Math.floor(Date.now() / 1000);
  const verified =
    scheme === 'ed25519'
      ? await verifyEd25519(process.env.WEBHOOK_PUBLIC_KEY ?? '', request.headers, rawBody, nowSeconds, TOLERANCE_SECONDS)
      : scheme === 'standard-webhooks'
        ? verifyStandardWebhook(secret, request.headers, rawBody)
        : await verifySignature(
            secret,
            request.headers.get('x-service-timestamp'),
            request.headers.get('x-service-signature'),
            rawBody,
            nowSeconds,
            TOLERANCE_SECONDS,
          );
  if (!verified) return answer(400, 'bad signature', { outcome: 'rejected', eventId });
  // Parse only what verified; 400 (not 500) to a body that is not a JSON object: retrying will not fix it.
  const event = parseJsonObject(rawBody);
  if (!event) return answer(400, 'body is not a JSON object', { outcome: 'malformed', eventId });
  if (processedEventIds.has(eventId)) return answer(200, 'duplicate', { outcome: 'duplicate', eventId });
  // Your processing goes here.
  processedEventIds.add(eventId);
  return answer(200, 'processed', { outcome: 'processed', eventId, type: event.type, userId: event.userId });
}
