// A Next.js App Router route handler (app/api/webhooks/route.ts). Web APIs only (Request, Response, Web Crypto),
// so it runs on the Node.js and the Edge runtimes alike. request.arrayBuffer() gives the raw bytes: never
// verify over `await request.json()` re-serialized.

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

export async function POST(request: Request): Promise<Response> {
  const rawBody = new Uint8Array(await request.arrayBuffer());
  const eventId = request.headers.get('x-service-event-id') ?? '';
  const verified = await verifySignature(
    process.env.WEBHOOK_SECRET ?? '',
    request.headers.get('x-service-timestamp'),
    request.headers.get('x-service-signature'),
    rawBody,
    Math.floor(Date.now() / 1000),
    TOLERANCE_SECONDS,
  );
  if (!verified) {
    console.log(JSON.stringify({ outcome: 'rejected', eventId }));
    return new Response('bad signature', { status: 400 });
  }
  if (processedEventIds.has(eventId)) {
    console.log(JSON.stringify({ outcome: 'duplicate', eventId }));
    return new Response('duplicate', { status: 200 });
  }
  const event = JSON.parse(new TextDecoder().decode(rawBody)) as { type: string; userId: number };
  // Your processing goes here.
  processedEventIds.add(eventId);
  console.log(JSON.stringify({ outcome: 'processed', eventId, type: event.type, userId: event.userId }));
  return new Response('processed', { status: 200 });
}
